#!/usr/bin/perl
# greedy-perl: a 6 nimmt! bot in Perl with nothing but perl-base. Protocol: docs/protocol.md.
#
# Play: the card that goes onto a row with room (fewer than 5 cards) with the smallest
# gap to that row's end; if no card does, the lowest card. Row: the fewest heads.
# Draft: the lowest card on offer. Two cards a turn: the two best cards by that rule.
#
# perl-base has no JSON module, so `decode` is a small recursive reader built on \G
# regexes: objects become hashes, arrays arrays, strings and numbers scalars, and
# true/false/null 1/0/undef. Answers are made of integers only, so `encode` is shorter.
use strict;
use warnings;

$| = 1;    # flush stdout after every answer

my $NAME    = 'greedy-perl';
my $VERSION = '1.0.0';

sub value {
    my ($text) = @_;    # a reference to the line; pos() is where we are
    $$text =~ /\G\s*/gc;
    if ($$text =~ /\G\{\s*/gc) {
        my %object;
        return \%object if $$text =~ /\G\}/gc;
        while (1) {
            $$text =~ /\G\s*("(?:[^"\\]|\\.)*")\s*:/gc or die "expected a key\n";
            my $key = string($1);
            $object{$key} = value($text);
            $$text =~ /\G\s*/gc;
            next if $$text =~ /\G,/gc;
            return \%object if $$text =~ /\G\}/gc;
            die "expected , or }\n";
        }
    }
    if ($$text =~ /\G\[\s*/gc) {
        my @array;
        return \@array if $$text =~ /\G\]/gc;
        while (1) {
            push @array, value($text);
            $$text =~ /\G\s*/gc;
            next if $$text =~ /\G,/gc;
            return \@array if $$text =~ /\G\]/gc;
            die "expected , or ]\n";
        }
    }
    return string($1) if $$text =~ /\G("(?:[^"\\]|\\.)*")/gc;
    return $1 + 0 if $$text =~ /\G(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/gc;
    return 1 if $$text =~ /\Gtrue/gc;
    return 0 if $$text =~ /\Gfalse/gc;
    return undef if $$text =~ /\Gnull/gc;
    die "unexpected text at byte " . (pos($$text) // 0) . "\n";
}

sub string {    # the quoted JSON string's text; \u escapes are kept as they are
    my ($quoted) = @_;
    my $s = substr($quoted, 1, -1);
    my %escape = ('n' => "\n", 't' => "\t", 'r' => "\r", 'b' => "\b", 'f' => "\f");
    $s =~ s/\\(["\\\/bfnrt])/exists $escape{$1} ? $escape{$1} : $1/ge;
    return $s;
}

sub decode {
    my ($line) = @_;
    pos($line) = 0;
    return value(\$line);
}

sub encode {    # integers, strings without quotes or backslashes, arrays and hashes of them
    my ($v) = @_;
    return '[' . join(',', map { encode($_) } @$v) . ']' if ref $v eq 'ARRAY';
    return '{' . join(',', map { "\"$_\":" . encode($v->{$_}) } sort keys %$v) . '}' if ref $v eq 'HASH';
    return $v if $v =~ /^-?\d+$/;
    return "\"$v\"";
}

sub heads {
    my ($card) = @_;
    return 7 if $card == 55;
    return 5 if $card % 11 == 0;
    return 3 if $card % 10 == 0;
    return 2 if $card % 5 == 0;
    return 1;
}

sub badness {    # lower is better: the gap onto a row with room, else 1000 + the card
    my ($card, $rows) = @_;
    my $best;
    for my $row (@$rows) {
        next unless @$row;
        $best = $row if $row->[-1] < $card && (!$best || $row->[-1] > $best->[-1]);
    }
    return $card - $best->[-1] if $best && @$best < 5;
    return 1000 + $card;
}

sub ranked {
    my ($cards, $rows) = @_;
    return sort { badness($a, $rows) <=> badness($b, $rows) || $a <=> $b } @$cards;
}

sub decide {
    my ($kind, $view, $legal) = @_;
    my $rows = $view->{rows} // [];
    if ($kind eq 'play' && ref $legal->[0] eq 'ARRAY') {    # two cards a turn
        my %seen;
        my @cards = grep { !$seen{$_}++ } map {@$_} @$legal;
        my @best = sort { $a <=> $b } (ranked(\@cards, $rows))[0, 1];
        for my $pair (@$legal) {
            return $pair if @$pair == 2 && defined $best[1] && $pair->[0] == $best[0] && $pair->[1] == $best[1];
        }
        return $legal->[0];
    }
    return (ranked($legal, $rows))[0] if $kind eq 'play';
    if ($kind eq 'row') {
        my @cost = map {
            my $row = $rows->[$_] // [];
            my $h   = 0;
            $h += heads($_) for @$row;
            [$h, scalar @$row, $_]
        } @$legal;
        my ($best) = sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] || $a->[2] <=> $b->[2] } @cost;
        return $best->[2];
    }
    return (sort { $a <=> $b } @$legal)[0] if $kind eq 'draft';
    return $legal->[0];
}

while (my $line = <STDIN>) {
    next unless $line =~ /\S/;
    my $msg = eval { decode($line) };
    if (!$msg || ref $msg ne 'HASH') {
        print STDERR "greedy-perl: cannot read a line: " . ($@ || "not an object\n");
        next;
    }
    my $type = $msg->{type} // '';
    if ($type eq 'hello') {
        my $accept = ($msg->{game} // '') eq 'nimmt' ? 'true' : 'false';
        print "{\"type\":\"hello\",\"name\":\"$NAME\",\"version\":\"$VERSION\",\"accept\":$accept}\n";
    }
    elsif ($type eq 'request') {
        my $answer = decide($msg->{kind} // '', $msg->{view} // {}, $msg->{legal});
        print '{"type":"answer","id":' . $msg->{id} . ',"answer":' . encode($answer) . "}\n";
    }
    elsif ($type eq 'bye') {
        last;
    }
}
