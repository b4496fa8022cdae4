# Driver for the Kaitai Ruby parsers: `ruby driver.rb JOB.json` (see ../README.md).
# The runtime's lib/ and the job's `generated` folder are on the load path; objects are walked
# with the plan. Ruby keeps enum values as symbols: they print as their integers through the
# plan's enums.
require 'json'
require 'base64'
require 'kaitai/struct/struct'

def camel(name)
  name.split('_').map { |p| p[0].upcase + p[1..] }.join
end

job = JSON.parse(File.read(ARGV[0]))
plan = JSON.parse(File.read(job['plan']))
$LOAD_PATH.unshift(job['generated'])
require plan['root']
root_class = Object.const_get(camel(plan['root']))
classes = {}
plan['classes'].each { |name, c| classes[camel(name)] = c }
enums = {}
plan['enums'].each { |key, e| enums[key] = e['values'] }
wanted = (job['instances'] || [])

plain = nil
dump = nil
plain = lambda do |value, member|
  case value
  when Kaitai::Struct::Struct then dump.call(value)
  when Array then value.map { |v| plain.call(v, member) }
  when Symbol
    # The compiler names an enum's symbols <enum name>_<value name>.
    key = member && member['enum']
    values = key && enums[key]
    name = value.to_s.delete_prefix("#{key.to_s.split('::').last}_")
    raise "enum value #{value} of #{member && member['name']} not in the plan" unless values && values.key?(name)
    values[name]
  when String
    if value.encoding == Encoding::ASCII_8BIT
      { '$b64' => Base64.strict_encode64(value) }
    else
      value.valid_encoding? ? value.encode('UTF-8') : value.scrub
    end
  else value
  end
end

dump = lambda do |obj|
  out = {}
  cls = classes[obj.class.name.split('::').last]
  raise "no plan for class #{obj.class.name}" unless cls
  cls['members'].each do |m|
    next if m['kind'] == 'pos' && !wanted.include?(m['name'])
    next if m['kind'] == 'seq' && !obj.instance_variable_defined?("@#{m['name']}")
    out[m['name']] = plain.call(obj.send(m['name']), m)
  end
  out
end

results = job['files'].map do |file|
  begin
    data = File.binread(file['path'])
    offset = file['offset'] || 0
    data = file['length'].nil? ? data[offset..] : data[offset, file['length']]
    obj = root_class.new(Kaitai::Struct::Stream.new(data))
    flt = job['filter']
    if flt
      items = obj.send(flt['array'])
      kept = []
      items.each_with_index { |x, i| kept << [i, dump.call(x)] if x.send(flt['where']) }
      { flt['array'] => kept, "num_#{flt['array']}" => items.length }
    else
      dump.call(obj)
    end
  rescue StandardError, SystemStackError => e
    { '_error' => "#{e.class.name}: #{e.message}" }
  end
end
$stdout.write(JSON.generate(results))
