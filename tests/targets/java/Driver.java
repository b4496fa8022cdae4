// Driver for the Kaitai Java parsers: `java Driver JOB.json` (see ../README.md).
// Objects are walked by reflection with the plan: seq fields and instances are public methods
// named in lower camel case; enums print their id(); u8 fields print unsigned.
import io.kaitai.struct.ByteBufferKaitaiStream;
import io.kaitai.struct.KaitaiStream;
import io.kaitai.struct.KaitaiStruct;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.*;

public class Driver {
    // -- a minimal JSON reader for the job and the plan ------------------------------------
    static final class Json {
        final String s;
        int i;
        Json(String s) { this.s = s; }
        static Object parse(String s) { Json j = new Json(s); return j.value(); }
        void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
        Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++; ws();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    ws(); String k = (String) value(); ws(); i++; // ':'
                    m.put(k, value()); ws();
                    if (s.charAt(i++) == '}') return m;
                }
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++; ws();
                if (s.charAt(i) == ']') { i++; return l; }
                while (true) {
                    l.add(value()); ws();
                    if (s.charAt(i++) == ']') return l;
                }
            }
            if (c == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                while (s.charAt(i) != '"') {
                    char ch = s.charAt(i++);
                    if (ch == '\\') {
                        char e = s.charAt(i++);
                        switch (e) {
                            case 'n': b.append('\n'); break;
                            case 't': b.append('\t'); break;
                            case 'r': b.append('\r'); break;
                            case 'b': b.append('\b'); break;
                            case 'f': b.append('\f'); break;
                            case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                            default: b.append(e);
                        }
                    } else b.append(ch);
                }
                i++;
                return b.toString();
            }
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            return Long.parseLong(s.substring(start, i));
        }
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String camel(String s, boolean upper) {
        StringBuilder b = new StringBuilder();
        boolean up = upper;
        for (char c : s.toCharArray()) {
            if (c == '_') { up = true; continue; }
            b.append(up ? Character.toUpperCase(c) : c);
            up = false;
        }
        return b.toString();
    }

    final Map<String, Map<String, Object>> classes = new HashMap<>(); // simple class name -> plan class
    final Set<String> wanted = new HashSet<>();

    static final Object ABSENT = new Object();

    @SuppressWarnings("unchecked")
    Object member(Object obj, Map<String, Object> m) throws Exception {
        Method method = obj.getClass().getMethod(camel((String) m.get("name"), false));
        Object v;
        try {
            v = method.invoke(obj);
        } catch (InvocationTargetException e) {
            throw (e.getCause() instanceof Exception) ? (Exception) e.getCause() : e;
        }
        if (v == null && "seq".equals(m.get("kind")) && Boolean.TRUE.equals(m.get("optional"))) return ABSENT;
        return v;
    }

    @SuppressWarnings("unchecked")
    void obj(StringBuilder b, Object obj) throws Exception {
        Map<String, Object> c = classes.get(obj.getClass().getSimpleName());
        if (c == null) throw new IllegalStateException("no plan for " + obj.getClass().getName());
        b.append('{');
        boolean first = true;
        for (Object o : (List<Object>) c.get("members")) {
            Map<String, Object> m = (Map<String, Object>) o;
            if ("pos".equals(m.get("kind")) && !wanted.contains(m.get("name"))) continue;
            Object v = member(obj, m);
            if (v == ABSENT) continue;
            if (!first) b.append(',');
            first = false;
            b.append(quote((String) m.get("name"))).append(':');
            value(b, v, "u8".equals(m.get("type")));
        }
        b.append('}');
    }

    void value(StringBuilder b, Object v, boolean unsigned) throws Exception {
        if (v == null) b.append("null");
        else if (v instanceof KaitaiStruct) obj(b, v);
        else if (v instanceof byte[]) b.append("{\"$b64\":\"").append(Base64.getEncoder().encodeToString((byte[]) v)).append("\"}");
        else if (v instanceof List) {
            b.append('[');
            boolean first = true;
            for (Object x : (List<?>) v) {
                if (!first) b.append(',');
                first = false;
                value(b, x, unsigned);
            }
            b.append(']');
        } else if (v instanceof String) b.append(quote((String) v));
        else if (v instanceof Enum) b.append(v.getClass().getMethod("id").invoke(v));
        else if (v instanceof Long && unsigned) b.append(Long.toUnsignedString((Long) v));
        else if (v instanceof Number || v instanceof Boolean) b.append(v);
        else throw new IllegalStateException("cannot print " + v.getClass());
    }

    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception {
        Map<String, Object> job = (Map<String, Object>) Json.parse(new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8));
        Map<String, Object> plan = (Map<String, Object>) Json.parse(new String(Files.readAllBytes(Paths.get((String) job.get("plan"))), StandardCharsets.UTF_8));
        Driver d = new Driver();
        for (Map.Entry<String, Object> e : ((Map<String, Object>) plan.get("classes")).entrySet())
            d.classes.put(camel(e.getKey(), true), (Map<String, Object>) e.getValue());
        for (Object n : (List<Object>) job.get("instances")) d.wanted.add((String) n);
        Class<?> root = Class.forName(camel((String) plan.get("root"), true));
        Map<String, Object> filter = (Map<String, Object>) job.get("filter");
        StringBuilder out = new StringBuilder("[");
        boolean firstFile = true;
        for (Object fo : (List<Object>) job.get("files")) {
            Map<String, Object> f = (Map<String, Object>) fo;
            if (!firstFile) out.append(',');
            firstFile = false;
            StringBuilder b = new StringBuilder();
            try {
                byte[] data = Files.readAllBytes(Paths.get((String) f.get("path")));
                int off = f.get("offset") == null ? 0 : ((Long) f.get("offset")).intValue();
                int end = f.get("length") == null ? data.length : off + ((Long) f.get("length")).intValue();
                data = Arrays.copyOfRange(data, off, end);
                Object obj;
                try {
                    obj = root.getConstructor(KaitaiStream.class).newInstance(new ByteBufferKaitaiStream(data));
                } catch (InvocationTargetException e) {
                    throw (e.getCause() instanceof Exception) ? (Exception) e.getCause() : e;
                }
                if (filter == null) d.obj(b, obj);
                else {
                    String array = (String) filter.get("array");
                    List<?> items = (List<?>) obj.getClass().getMethod(camel(array, false)).invoke(obj);
                    String where = camel((String) filter.get("where"), false);
                    b.append('{').append(quote(array)).append(":[");
                    boolean first = true;
                    for (int i = 0; i < items.size(); i++) {
                        Object it = items.get(i);
                        if (!Boolean.TRUE.equals(it.getClass().getMethod(where).invoke(it))) continue;
                        if (!first) b.append(',');
                        first = false;
                        b.append('[').append(i).append(',');
                        d.obj(b, it);
                        b.append(']');
                    }
                    b.append("],").append(quote("num_" + array)).append(':').append(items.size()).append('}');
                }
            } catch (Exception e) {
                b = new StringBuilder("{\"_error\":" + quote(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}");
            }
            out.append(b);
        }
        out.append(']');
        System.out.write(out.toString().getBytes(StandardCharsets.UTF_8));
        System.out.flush();
    }
}
