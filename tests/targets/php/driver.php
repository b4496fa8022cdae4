<?php
// Driver for the Kaitai PHP parsers: `php driver.php RUNTIME_LIB JOB.json` (see ../README.md).
// The official runtime's classes load from RUNTIME_LIB (lib/ of the runtime, PSR-4 layout);
// the job's `generated` folder holds the parser. Objects are walked with the plan. PHP keeps
// text and bytes alike as strings: the plan's member type tells which one a value is.

$runtimeLib = $argv[1];
spl_autoload_register(function ($class) use ($runtimeLib) {
    $file = $runtimeLib . '/' . str_replace('\\', '/', $class) . '.php';
    if (is_file($file)) {
        require $file;
    }
});

function camel($name) {
    return str_replace(' ', '', ucwords(str_replace('_', ' ', $name)));
}

$job = json_decode(file_get_contents($argv[2]), true);
$plan = json_decode(file_get_contents($job['plan']), true);
require $job['generated'] . '/' . camel($plan['root']) . '.php';
$rootClass = camel($plan['root']);
$classes = [];
foreach ($plan['classes'] as $name => $c) {
    $classes[camel($name)] = $c;
}
$wanted = $job['instances'] ?? [];

function plain($value, $member, $classes, $wanted) {
    if ($value instanceof \Kaitai\Struct\Struct) {
        return dump($value, $classes, $wanted);
    }
    if (is_array($value)) {
        $out = [];
        foreach ($value as $v) {
            $out[] = plain($v, $member, $classes, $wanted);
        }
        return $out;
    }
    if (is_string($value) && ($member['type'] === 'bytes' || $member['type'] === 'switch')) {
        return ['$b64' => base64_encode($value)];
    }
    return $value;
}

function dump($obj, $classes, $wanted) {
    $parts = explode('\\', get_class($obj));
    $name = end($parts);
    if (!isset($classes[$name])) {
        throw new \RuntimeException("no plan for class " . get_class($obj));
    }
    $out = [];
    foreach ($classes[$name]['members'] as $m) {
        if ($m['kind'] === 'pos' && !in_array($m['name'], $wanted, true)) {
            continue;
        }
        $value = $obj->{lcfirst(camel($m['name']))}();
        if ($m['kind'] === 'seq' && $value === null) {
            continue;  // absent: its `if` is false (a read seq field is never null)
        }
        $out[$m['name']] = plain($value, $m, $classes, $wanted);
    }
    return (object) $out;
}

$results = [];
foreach ($job['files'] as $file) {
    try {
        $offset = $file['offset'] ?? 0;
        $data = $file['length'] === null
            ? file_get_contents($file['path'], false, null, $offset)
            : file_get_contents($file['path'], false, null, $offset, $file['length']);
        if ($data === false) {
            throw new \RuntimeException("cannot read " . $file['path']);
        }
        $obj = new $rootClass(new \Kaitai\Struct\Stream($data));
        $flt = $job['filter'] ?? null;
        if ($flt) {
            $items = $obj->{lcfirst(camel($flt['array']))}();
            $kept = [];
            foreach ($items as $i => $x) {
                if ($x->{lcfirst(camel($flt['where']))}()) {
                    $kept[] = [$i, dump($x, $classes, $wanted)];
                }
            }
            $results[] = (object) [$flt['array'] => $kept, 'num_' . $flt['array'] => count($items)];
        } else {
            $results[] = dump($obj, $classes, $wanted);
        }
    } catch (\Throwable $e) {
        $results[] = (object) ['_error' => get_class($e) . ': ' . $e->getMessage()];
    }
}
$json = json_encode($results, JSON_INVALID_UTF8_SUBSTITUTE | JSON_PRESERVE_ZERO_FRACTION);
if ($json === false) {
    fwrite(STDERR, json_last_error_msg() . "\n");
    exit(1);
}
echo $json;
