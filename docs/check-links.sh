#!/usr/bin/env bash
# Checks README.md and docs/*.md: every relative Markdown link names an existing file (and,
# with #anchor, a heading of that file), and every repository path quoted in backticks
# (`crates/…`, `examples/…`, `benches/…`, `scripts/…`, `docs/…`, `.ci/…`; relative to the
# repository root) exists. Prints each broken one; exit status 1 if any.
# Usage: docs/check-links.sh   (from anywhere in the repository)
set -euo pipefail
cd "$(dirname "$0")/.."
exec perl -CSD -Mutf8 -e '
use strict; use warnings;
my $bad = 0; my ($links, $paths) = (0, 0);
my %anchors;
sub anchors {    # GitHub heading slugs of a Markdown file
    my ($f) = @_;
    return $anchors{$f} if $anchors{$f};
    my %a; my $fence = 0;
    open my $h, "<", $f or die "$f: $!";
    while (<$h>) {
        $fence = !$fence if /^```/;
        next if $fence || !/^#+\s+(.*?)\s*$/;
        my $s = lc $1;
        $s =~ s/[^\w\- ]//g;
        $s =~ s/ /-/g;
        my $n = $s; my $i = 0;
        $n = "$s-" . ++$i while $a{$n};
        $a{$n} = 1;
    }
    return $anchors{$f} = \%a;
}
for my $file (@ARGV) {
    (my $dir = $file) =~ s{[^/]*$}{};
    open my $h, "<", $file or die "$file: $!";
    my $fence = 0;
    while (my $line = <$h>) {
        if ($line =~ /^```/) { $fence = !$fence; next }
        next if $fence;
        while ($line =~ /\]\(([^)\s]+)\)/g) {
            my $t = $1; $links++;
            next if $t =~ m{^[a-z][a-z0-9+.-]*:}i;     # http:, https:, mailto:
            my ($path, $frag) = $t =~ /^([^#]*)(?:#(.*))?$/;
            my $target = $path eq "" ? $file : "$dir$path";
            if (!-e $target) { print "$file:$.: link to missing $t\n"; $bad = 1; next }
            if (defined $frag && -f $target && $target =~ /\.md$/ && !anchors($target)->{$frag}) {
                print "$file:$.: no heading #$frag in $target\n"; $bad = 1;
            }
        }
        while ($line =~ /`((?:crates|examples|benches|scripts|docs|\.ci)\/[^`\s<>*]*)`/g) {
            my $p = $1; $paths++;
            if (!-e $p) { print "$file:$.: path `$p` does not exist\n"; $bad = 1 }
        }
    }
}
print $bad ? "broken links or paths above\n" : "$links links and $paths quoted paths: all resolve\n";
exit $bad;
' README.md docs/*.md
