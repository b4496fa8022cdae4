// Driver for the Kaitai Go parsers: `driver JOB.json` (see ../README.md).
// The parsers are compiled into package `parsers` with a generated `Roots` table (spec id ->
// reader of the root type); objects are walked by reflection with the plan: seq fields are
// exported struct fields, instances are methods returning (value, error).
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/kaitai-io/kaitai_struct_go_runtime/kaitai"
	"rmqtargets/parsers"
)

type member struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	Optional bool   `json:"optional"`
}

type class struct {
	Path    []string `json:"path"`
	Members []member `json:"members"`
}

type plan struct {
	Root    string           `json:"root"`
	Classes map[string]class `json:"classes"`
}

type file struct {
	Path   string `json:"path"`
	Offset int64  `json:"offset"`
	Length *int64 `json:"length"`
}

type job struct {
	Spec      string   `json:"spec"`
	Plan      string   `json:"plan"`
	Files     []file   `json:"files"`
	Instances []string `json:"instances"`
	Filter    *struct {
		Array string `json:"array"`
		Where string `json:"where"`
	} `json:"filter"`
}

func camel(s string) string {
	parts := strings.Split(s, "_")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "")
}

type dumper struct {
	classes map[string]class // Go type name -> class
	wanted  map[string]bool
}

func (d *dumper) member(v reflect.Value, m member) (reflect.Value, bool, error) {
	name := camel(m.Name)
	if m.Kind == "seq" {
		f := v.Elem().FieldByName(name)
		if !f.IsValid() {
			return f, false, fmt.Errorf("no field %s", name)
		}
		if m.Optional && (f.Kind() == reflect.Ptr || f.Kind() == reflect.Interface) && f.IsNil() {
			return f, false, nil // absent
		}
		return f, true, nil
	}
	meth := v.MethodByName(name)
	if !meth.IsValid() {
		return meth, false, fmt.Errorf("no method %s", name)
	}
	out := meth.Call(nil)
	if len(out) == 2 && !out[1].IsNil() {
		return out[0], false, out[1].Interface().(error)
	}
	return out[0], true, nil
}

func (d *dumper) obj(b *strings.Builder, v reflect.Value) error {
	c, ok := d.classes[v.Elem().Type().Name()]
	if !ok {
		return fmt.Errorf("no plan for %s", v.Elem().Type().Name())
	}
	b.WriteByte('{')
	first := true
	for _, m := range c.Members {
		if m.Kind == "pos" && !d.wanted[m.Name] {
			continue
		}
		val, present, err := d.member(v, m)
		if err != nil {
			return err
		}
		if !present {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		key, _ := json.Marshal(m.Name)
		b.Write(key)
		b.WriteByte(':')
		if err := d.value(b, val); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func (d *dumper) value(b *strings.Builder, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		return d.value(b, v.Elem())
	case reflect.Ptr:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		if v.Elem().Kind() == reflect.Struct {
			return d.obj(b, v)
		}
		return d.value(b, v.Elem())
	case reflect.Struct:
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		return d.obj(b, p)
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.String:
		s, _ := json.Marshal(v.String())
		b.Write(s)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b.WriteString(`{"$b64":"` + base64.StdEncoding.EncodeToString(v.Bytes()) + `"}`)
			return nil
		}
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := d.value(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return fmt.Errorf("cannot print a %s", v.Kind())
	}
	return nil
}

func (d *dumper) one(j *job, f file) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return "", err
	}
	end := int64(len(data))
	if f.Length != nil {
		end = f.Offset + *f.Length
	}
	data = data[f.Offset:end]
	root, err := parsers.Roots[j.Spec](kaitai.NewStream(strings.NewReader(string(data))))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	v := reflect.ValueOf(root)
	if j.Filter == nil {
		err = d.obj(&b, v)
		return b.String(), err
	}
	items := v.Elem().FieldByName(camel(j.Filter.Array))
	key, _ := json.Marshal(j.Filter.Array)
	b.WriteString("{" + string(key) + ":[")
	n := 0
	for i := 0; i < items.Len(); i++ {
		it := items.Index(i)
		keep, _, err := d.member(it, member{Name: j.Filter.Where, Kind: "value"})
		if err != nil {
			return "", err
		}
		if !keep.Bool() {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString("[" + strconv.Itoa(i) + ",")
		if err := d.obj(&b, it); err != nil {
			return "", err
		}
		b.WriteByte(']')
	}
	num, _ := json.Marshal("num_" + j.Filter.Array)
	b.WriteString("]," + string(num) + ":" + strconv.Itoa(items.Len()) + "}")
	return b.String(), nil
}

func main() {
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var j job
	if err := json.Unmarshal(raw, &j); err != nil {
		panic(err)
	}
	raw, err = os.ReadFile(j.Plan)
	if err != nil {
		panic(err)
	}
	var p plan
	if err := json.Unmarshal(raw, &p); err != nil {
		panic(err)
	}
	d := &dumper{classes: map[string]class{}, wanted: map[string]bool{}}
	for _, c := range p.Classes {
		names := make([]string, len(c.Path))
		for i, s := range c.Path {
			names[i] = camel(s)
		}
		d.classes[strings.Join(names, "_")] = c
	}
	for _, n := range j.Instances {
		d.wanted[n] = true
	}
	var out strings.Builder
	out.WriteByte('[')
	for i, f := range j.Files {
		if i > 0 {
			out.WriteByte(',')
		}
		s, err := d.one(&j, f)
		if err != nil {
			msg, _ := json.Marshal(fmt.Sprintf("%T: %v", err, err))
			s = `{"_error":` + string(msg) + `}`
		}
		out.WriteString(s)
	}
	out.WriteByte(']')
	os.Stdout.WriteString(out.String())
}
