/*
 * The control socket's PID-namespace rule (common/peerns.c): a peer in our namespace
 * passes; pid 0 (a namespace we cannot see) and a pid with no process are refused,
 * each with a reason that names it. Peers in other namespaces are refused in
 * test/escape/daemon_peer.sh, with real namespaces.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <string.h>
#include <unistd.h>

#include "peerns.h"

static void
test_peerns_rules(void **state)
{
	struct peerns	self;
	char		why[256];
	int		sv[2];

	(void)state;
	assert_int_equal(peerns_init(&self), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	why[0] = '\0';
	assert_int_equal(peerns_check(&self, sv[0], getpid(), why, sizeof why), 0);
	assert_int_equal(peerns_check(&self, sv[0], 0, why, sizeof why), -1);
	assert_non_null(strstr(why, "pid 0"));
	/* Above pid_max (at most 2^22): no process can have it. */
	assert_int_equal(peerns_check(&self, sv[0], 0x7ffffff0, why, sizeof why), -1);
	assert_non_null(strstr(why, "/proc/2147483632/ns/pid"));
	/* Another namespace recorded as ours: our own pid is then refused. */
	self.ino++;
	assert_int_equal(peerns_check(&self, sv[0], getpid(), why, sizeof why), -1);
	assert_non_null(strstr(why, "is not ours"));
	close(sv[0]);
	close(sv[1]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peerns_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
