#!/usr/bin/perl
# A stand-in for `cw-runner run` that speaks the daemon<->runner protocol (common/wire.h)
# with no sandbox, so the daemon's own supervision can be tested on its own: it runs the
# prompt with `sh -c` in the workdir, in its own process group, forwards output as log
# lines and ends with a report. Markers in the prompt change its behaviour:
#   #hang         the runner itself ignores SIGTERM and the stop line (a hung runner)
#   #approval     asks for one approval first and prints the decision it receives
#   #usage=D,T    reports D dollars and T turns of use
#   #refuse       refuses the run as cw-runner does when the sandbox cannot be enforced
#   #ruledeny     reports a configured rule's denial and a floor rule's, as the bridge does
#   #flood=N      sends N approval requests at once, without counting them as
#                 cw-runner does (the daemon's own bound must hold), and logs every
#                 decision that comes back ("decision ID BEHAVIOR: MESSAGE")
#   #risky        the #approval request carries risk "destructive" (config.rm_root),
#                 and a floor_deny and a rule_deny event come first, as cw-runner's
#                 bridge sends them
#   #family=F     the #approval request names command family F (one word, '+' for a
#                 space), what "always for this task" would remember; the run's task
#                 rules and approvals.ask from the run message are logged
use strict;
use warnings;
use JSON::PP;
use IO::Select;
use POSIX qw(setpgid :sys_wait_h);

$| = 1;
my $json = JSON::PP->new->canonical;
sub send_msg { my ($m) = @_; $m->{v} = 1; print $json->encode($m), "\n"; }

my $line = <STDIN>;
exit 2 unless defined $line;
my $spec = $json->decode($line);
my $prompt = $spec->{prompt};
$SIG{TERM} = 'IGNORE' if $prompt =~ /#hang/;
if ($prompt =~ /#refuse/) {
	send_msg({ type => 'report', run_id => $spec->{run_id}, status => 'refused',
	    exit_reason => 'failed', error => 'landlock: not supported by this kernel',
	    sandboxed => JSON::PP::false, not_enforced => [] });
	exit 3;
}
send_msg({ type => 'hello', pid => $$, pgid => getpgrp(), sandboxed => JSON::PP::false });
send_msg({ type => 'event', kind => 'sandbox_disabled', reason => 'fake runner' });

if ($prompt =~ /#ruledeny/) {
	send_msg({ type => 'event', kind => 'floor_deny', rule => 'config.no-curl',
	    reason => 'no curl here', command => 'curl example.com', source => 'hook',
	    floor => JSON::PP::false, seq => 1 });
	send_msg({ type => 'event', kind => 'floor_deny', rule => 'floor.force_push',
	    reason => 'force-push to main', command => 'git push -f origin main',
	    source => 'hook', floor => JSON::PP::true, seq => 2 });
}
my $decision = '';
if ($prompt =~ /#risky/) {
	send_msg({ type => 'event', kind => 'floor_deny', rule => 'floor.publish',
	    reason => 'package publishing (npm publish) is blocked', command => 'npm publish',
	    source => 'hook', floor => JSON::PP::true });
	send_msg({ type => 'event', kind => 'rule_deny', rule => 'config.sudo',
	    reason => 'sudo is blocked by rule sudo', command => 'sudo ls', source => 'hook',
	    floor => JSON::PP::false });
}
if ($prompt =~ /#approval/) {
	# "#approvalcmd CMD" at the end of the prompt asks about CMD instead.
	my $cmd = $prompt =~ /#approvalcmd (.*)\z/s ? $1 :
	    $prompt =~ /#risky/ ? 'rm -rf /' : 'rm -rf build';
	my %req = (type => 'approval_request', id => 'req-1', tool => 'Bash',
	    input => { command => $cmd }, deadline => 0);
	@req{qw(risk risk_rule)} = ('destructive', 'config.rm_root') if $prompt =~ /#risky/;
	if ($prompt =~ /#family=(\S+)/) { (my $f = $1) =~ tr/+/ /; $req{family} = $f; }
	send_msg(\%req);
	while (my $l = <STDIN>) {
		my $m = eval { $json->decode($l) } or next;
		if ($m->{type} eq 'decision') { $decision = $m->{behavior}; last; }
	}
	send_msg({ type => 'event', kind => 'approval_decided', behavior => $decision });
}

if ($prompt =~ /#flood=([0-9]+)/) {
	for my $i (1 .. $1) {
		send_msg({ type => 'approval_request', id => "flood-$i", tool => 'Bash',
		    input => { command => "echo flood $i" }, deadline => 0 });
	}
}

pipe(my $r, my $w) or die;
my $pid = fork();
if ($pid == 0) {
	setpgid(0, 0);
	close $r;
	open STDOUT, '>&', $w; open STDERR, '>&', $w;
	chdir $spec->{workdir};
	$ENV{DECISION} = $decision;
	exec '/bin/sh', '-c', $prompt;
	exit 127;
}
close $w;
my $sel = IO::Select->new($r, \*STDIN);
my $stopped = 0;
my $buf = '';
OUTER: while (1) {
	for my $fh ($sel->can_read()) {
		my $n = sysread($fh, my $chunk, 65536);
		if ($fh == $r) {
			last OUTER if !$n;
			send_msg({ type => 'log', stream => 'stdout', text => $chunk });
		} else {
			if (!$n) { $sel->remove(\*STDIN); next; }
			$buf .= $chunk;
			while ($buf =~ s/^(.*)\n//) {
				my $m = eval { $json->decode($1) } or next;
				if ($m->{type} eq 'decision') {
					send_msg({ type => 'log', stream => 'stdout', text =>
					    "decision $m->{id} $m->{behavior}: " .
					    ($m->{message} // '') . "\n" });
				}
				if ($m->{type} eq 'stop' && $prompt !~ /#hang/) {
					$stopped = 1;
					kill 'TERM', -$pid;
				}
			}
		}
	}
}
waitpid($pid, 0);
my $rc = $? >> 8;
if ($prompt =~ /#usage=([0-9.]+),([0-9]+)/) {
	send_msg({ type => 'usage', dollars => $1 + 0, turns => $2 + 0 });
}
send_msg({ type => 'report', status => ($rc == 0 && !$stopped) ? 'succeeded' : ($stopped ? 'stopped' : 'failed'),
    exit_reason => $stopped ? 'stopped' : ($rc == 0 ? 'completed' : 'failed'),
    sandboxed => JSON::PP::false, not_enforced => [], exit_code => $rc });
exit 0;
