// Driver for the Kaitai C# parsers: `mono driver.exe JOB.json` (see ../README.md).
// Built with Mono's mcs together with the generated classes and the official runtime's
// sources; the parsed objects are walked by reflection with the plan. Mono has no JSON
// library of its own (System.Text.Json is .NET only), so a small reader and writer are here.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Reflection;
using System.Text;
using Kaitai;

static class Json
{
    public static object Parse(string s) { int i = 0; object v = Value(s, ref i); return v; }

    static void Ws(string s, ref int i) { while (i < s.Length && char.IsWhiteSpace(s[i])) i++; }

    static object Value(string s, ref int i)
    {
        Ws(s, ref i);
        char c = s[i];
        if (c == '{') {
            var d = new Dictionary<string, object>(); i++; Ws(s, ref i);
            if (s[i] == '}') { i++; return d; }
            while (true) {
                Ws(s, ref i); string k = Str(s, ref i); Ws(s, ref i); i++; // ':'
                d[k] = Value(s, ref i); Ws(s, ref i);
                if (s[i++] == '}') return d;
            }
        }
        if (c == '[') {
            var l = new List<object>(); i++; Ws(s, ref i);
            if (s[i] == ']') { i++; return l; }
            while (true) {
                l.Add(Value(s, ref i)); Ws(s, ref i);
                if (s[i++] == ']') return l;
            }
        }
        if (c == '"') return Str(s, ref i);
        if (s.Substring(i).StartsWith("true")) { i += 4; return true; }
        if (s.Substring(i).StartsWith("false")) { i += 5; return false; }
        if (s.Substring(i).StartsWith("null")) { i += 4; return null; }
        int start = i;
        while (i < s.Length && "+-0123456789.eE".IndexOf(s[i]) >= 0) i++;
        string num = s.Substring(start, i - start);
        long n;
        if (long.TryParse(num, NumberStyles.Integer, CultureInfo.InvariantCulture, out n)) return n;
        return double.Parse(num, CultureInfo.InvariantCulture);
    }

    static string Str(string s, ref int i)
    {
        var b = new StringBuilder(); i++;
        while (s[i] != '"') {
            char c = s[i++];
            if (c != '\\') { b.Append(c); continue; }
            char e = s[i++];
            switch (e) {
                case 'n': b.Append('\n'); break;
                case 't': b.Append('\t'); break;
                case 'r': b.Append('\r'); break;
                case 'b': b.Append('\b'); break;
                case 'f': b.Append('\f'); break;
                case 'u': b.Append((char) Convert.ToInt32(s.Substring(i, 4), 16)); i += 4; break;
                default: b.Append(e); break;
            }
        }
        i++;
        return b.ToString();
    }

    public static void Quote(StringBuilder b, string s)
    {
        b.Append('"');
        foreach (char c in s) {
            if (c == '"') b.Append("\\\"");
            else if (c == '\\') b.Append("\\\\");
            else if (c < 0x20 || (c >= 0xD800 && c <= 0xDFFF)) b.Append("\\u").Append(((int) c).ToString("x4"));
            else b.Append(c);
        }
        b.Append('"');
    }
}

static class Driver
{
    static Dictionary<string, Dictionary<string, object>> classes = new Dictionary<string, Dictionary<string, object>>();
    static HashSet<string> wanted = new HashSet<string>();

    static string Pascal(string name)
    {
        var b = new StringBuilder();
        foreach (var p in name.Split('_')) if (p.Length > 0) b.Append(char.ToUpperInvariant(p[0])).Append(p.Substring(1));
        return b.ToString();
    }

    static void Plain(StringBuilder b, object v)
    {
        if (v == null) { b.Append("null"); return; }
        if (v is KaitaiStruct) { Dump(b, (KaitaiStruct) v); return; }
        if (v is byte[]) { b.Append("{\"$b64\":\"").Append(Convert.ToBase64String((byte[]) v)).Append("\"}"); return; }
        if (v is string) { Json.Quote(b, (string) v); return; }
        if (v is bool) { b.Append((bool) v ? "true" : "false"); return; }
        if (v is Enum) {
            Type u = Enum.GetUnderlyingType(v.GetType());
            if (u == typeof(ulong)) b.Append(Convert.ToUInt64(v).ToString(CultureInfo.InvariantCulture));
            else b.Append(Convert.ToInt64(v).ToString(CultureInfo.InvariantCulture));
            return;
        }
        if (v is float || v is double) {
            double d = Convert.ToDouble(v);
            if (double.IsNaN(d) || double.IsInfinity(d)) b.Append("null");
            else b.Append(d.ToString("R", CultureInfo.InvariantCulture));
            return;
        }
        if (v is IList) {
            b.Append('[');
            bool first = true;
            foreach (object x in (IList) v) { if (!first) b.Append(','); first = false; Plain(b, x); }
            b.Append(']');
            return;
        }
        if (v is IFormattable) { b.Append(((IFormattable) v).ToString(null, CultureInfo.InvariantCulture)); return; }
        throw new Exception("cannot print a " + v.GetType());
    }

    static void Dump(StringBuilder b, KaitaiStruct obj)
    {
        Type t = obj.GetType();
        Dictionary<string, object> cls;
        if (!classes.TryGetValue(t.Name, out cls)) throw new Exception("no plan for class " + t.FullName);
        b.Append('{');
        bool first = true;
        foreach (object o in (List<object>) cls["members"]) {
            var m = (Dictionary<string, object>) o;
            string name = (string) m["name"], kind = (string) m["kind"];
            if (kind == "pos" && !wanted.Contains(name)) continue;
            PropertyInfo p = t.GetProperty(Pascal(name));
            if (p == null) throw new Exception(t.Name + " has no property " + Pascal(name));
            object v;
            try { v = p.GetValue(obj, null); }
            catch (TargetInvocationException e) { throw e.InnerException; }
            if (kind == "seq" && v == null && (bool) m["optional"]) continue;  // absent: its `if` is false
            if (!first) b.Append(',');
            first = false;
            Json.Quote(b, name);
            b.Append(':');
            Plain(b, v);
        }
        b.Append('}');
    }

    static int Main(string[] args)
    {
        var job = (Dictionary<string, object>) Json.Parse(File.ReadAllText(args[0]));
        var plan = (Dictionary<string, object>) Json.Parse(File.ReadAllText((string) job["plan"]));
        foreach (var kv in (Dictionary<string, object>) plan["classes"])
            classes[Pascal(kv.Key)] = (Dictionary<string, object>) kv.Value;
        if (job.ContainsKey("instances") && job["instances"] != null)
            foreach (object x in (List<object>) job["instances"]) wanted.Add((string) x);
        Type root = Type.GetType("Kaitai." + Pascal((string) plan["root"]), true);
        var filter = job.ContainsKey("filter") ? job["filter"] as Dictionary<string, object> : null;
        var outp = new StringBuilder("[");
        bool firstFile = true;
        foreach (object fo in (List<object>) job["files"]) {
            var file = (Dictionary<string, object>) fo;
            var b = new StringBuilder();
            try {
                byte[] data;
                using (var fs = File.OpenRead((string) file["path"])) {
                    long offset = file["offset"] == null ? 0 : (long) file["offset"];
                    long length = file["length"] == null ? fs.Length - offset : (long) file["length"];
                    fs.Seek(offset, SeekOrigin.Begin);
                    data = new byte[length];
                    int got = 0;
                    while (got < length) { int n = fs.Read(data, got, (int) (length - got)); if (n <= 0) break; got += n; }
                    if (got < length) Array.Resize(ref data, got);
                }
                object obj;
                try { obj = Activator.CreateInstance(root, new object[] { new KaitaiStream(data), null, null }); }
                catch (TargetInvocationException e) { throw e.InnerException; }
                if (filter != null) {
                    string array = (string) filter["array"], where = (string) filter["where"];
                    var items = (IList) root.GetProperty(Pascal(array)).GetValue(obj, null);
                    b.Append('{'); Json.Quote(b, array); b.Append(":[");
                    int kept = 0;
                    for (int i = 0; i < items.Count; i++) {
                        object item = items[i];
                        object w;
                        try { w = item.GetType().GetProperty(Pascal(where)).GetValue(item, null); }
                        catch (TargetInvocationException e) { throw e.InnerException; }
                        if (!(bool) w) continue;
                        if (kept++ > 0) b.Append(',');
                        b.Append('[').Append(i).Append(',');
                        Dump(b, (KaitaiStruct) item);
                        b.Append(']');
                    }
                    b.Append("],"); Json.Quote(b, "num_" + array); b.Append(':').Append(items.Count).Append('}');
                } else {
                    Dump(b, (KaitaiStruct) obj);
                }
            } catch (Exception e) {
                b.Clear();
                b.Append("{\"_error\":");
                Json.Quote(b, e.GetType().Name + ": " + e.Message);
                b.Append('}');
            }
            if (!firstFile) outp.Append(',');
            firstFile = false;
            outp.Append(b);
        }
        outp.Append(']');
        var stdout = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false));
        stdout.Write(outp.ToString());
        stdout.Flush();
        return 0;
    }
}
