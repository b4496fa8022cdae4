# Driver for the Kaitai Perl parsers: `perl -I RUNTIME/lib driver.pl JOB.json` (see ../README.md).
# The job's `generated` folder is put on @INC; objects are walked with the plan. Perl keeps
# text and bytes alike as strings and booleans as 1 and "": the plan's member type tells what
# a value is, and a scalar's own flags whether a value instance computed a number or a string.
use strict;
use warnings;
use B ();
use JSON::PP ();
use MIME::Base64 ();
use IO::KaitaiStruct;
use builtin ();
no warnings 'experimental::builtin';

# The generated code compares undef parameters (see target.py): its warnings are not results.
$SIG{__WARN__} = sub {};

# A comparison's result (Perl's own true and false), printed as a JSON boolean.
sub is_bool { my ($v) = @_; return builtin::is_bool($v); }

sub camel { my ($name) = @_; return join('', map { ucfirst } split(/_/, $name)); }

sub slurp {
    my ($path) = @_;
    open(my $fh, '<:raw', $path) or die "cannot read $path: $!";
    local $/;
    my $s = <$fh>;
    close($fh);
    return $s;
}

my $json = JSON::PP->new->utf8->canonical(0)->allow_nonref;
my $job = $json->decode(slurp($ARGV[0]));
my $plan = $json->decode(slurp($job->{plan}));
unshift @INC, $job->{generated};
my $root_class = camel($plan->{root});
require "$root_class.pm";
my %classes = map { camel($_) => $plan->{classes}{$_} } keys %{$plan->{classes}};
my %wanted = map { $_ => 1 } @{$job->{instances} || []};
my %int_type = map { $_ => 1 } qw(u1 u2 u4 u8 s1 s2 s4 s8 int bits bool f4 f8);

sub is_number {
    my ($v) = @_;
    my $flags = B::svref_2object(\$v)->FLAGS;
    return ($flags & (B::SVp_IOK | B::SVp_NOK)) ? 1 : 0;
}

sub plain {
    my ($v, $m) = @_;
    return undef unless defined $v;
    my $ref = ref($v);
    if ($ref eq 'ARRAY') { return [map { plain($_, $m) } @$v]; }
    if ($ref && $v->isa('IO::KaitaiStruct::Struct')) { return dump_obj($v); }
    my $t = $m->{type};
    if ($t eq 'bytes' || $t eq 'switch') { return {'$b64' => MIME::Base64::encode_base64($v, '')}; }
    if (is_bool($v)) { return $v ? JSON::PP::true : JSON::PP::false; }
    # A 1-bit field (`b1`, typed bool) reads as the number 0 or 1: a JSON boolean like the other targets.
    if ($t eq 'bool') { return $v ? JSON::PP::true : JSON::PP::false; }
    if ($int_type{$t} || $m->{enum}) { return 0 + $v; }
    if ($t eq 'str') { return "$v"; }
    return is_number($v) ? 0 + $v : "$v";  # a value instance: what Perl computed
}

sub dump_obj {
    my ($obj) = @_;
    my ($name) = ref($obj) =~ /(\w+)$/;
    my $cls = $classes{$name} or die "no plan for class " . ref($obj) . "\n";
    my %out;
    for my $m (@{$cls->{members}}) {
        next if $m->{kind} eq 'pos' && !$wanted{$m->{name}};
        next if $m->{kind} eq 'seq' && !exists $obj->{$m->{name}};  # absent: its `if` is false
        my $method = $m->{name};
        $out{$m->{name}} = plain($obj->$method(), $m);
    }
    return \%out;
}

my @results;
for my $file (@{$job->{files}}) {
    my $result = eval {
        open(my $fh, '<:raw', $file->{path}) or die "cannot read $file->{path}: $!\n";
        seek($fh, $file->{offset} || 0, 0);
        my $data = '';
        if (defined $file->{length}) { read($fh, $data, $file->{length}); }
        else { local $/; $data = <$fh> // ''; }
        close($fh);
        my $obj = $root_class->new(IO::KaitaiStruct::Stream->new($data));
        my $flt = $job->{filter};
        if ($flt) {
            my $array = $flt->{array};
            my $where = $flt->{where};
            my $items = $obj->$array();
            my @kept;
            for my $i (0 .. $#$items) {
                push @kept, [$i, dump_obj($items->[$i])] if $items->[$i]->$where();
            }
            +{$array => \@kept, "num_$array" => scalar(@$items)};
        } else {
            dump_obj($obj);
        }
    };
    if (!defined $result) {
        my $err = $@ || 'unknown error';
        $err =~ s/\s+$//;
        $result = {_error => (ref($err) || 'PerlError') . ": $err"};
    }
    push @results, $result;
}
binmode(STDOUT);
print $json->encode(\@results);
