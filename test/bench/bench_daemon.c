/*
 * bench_daemon: N requests to clockworkd, one after another, each on its own loopback
 * connection (the daemon answers every request with Connection: close), each timed
 * from connect() to the end of the answer with CLOCK_MONOTONIC. Used by
 * bench_daemon.sh for the 100-POST queue time: curl in a shell loop would add a
 * process start per request to the figure and time nothing of its own.
 *
 * Usage: bench_daemon PORT TOKEN METHOD PATH BODY COUNT
 * Prints: "total_ms T p50_ms A p99_ms B max_ms C statuses S" (S: the HTTP status of
 * each answer, counted). Exit 1 on a connection error or a status other than 2xx.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double
bench_daemon_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int
bench_daemon_cmp(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One request; returns the HTTP status, or -1 on a connection error. */
static int
bench_daemon_one(int port, const char *req, size_t reqlen)
{
	struct sockaddr_in	sa;
	char			buf[16384];
	size_t			got = 0;
	ssize_t			n;
	int			fd, one = 1, status = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == -1)
		goto out;
	for (size_t off = 0; off < reqlen; off += (size_t)n)
		if ((n = write(fd, req + off, reqlen - off)) <= 0)
			goto out;
	/* Read until the daemon closes; only the status line is kept. */
	while ((n = read(fd, buf + got, sizeof buf - 1 - got)) > 0)
		if (got < 64)
			got += (size_t)n;
	buf[got] = '\0';
	if (n == 0 && sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		status = -1;
out:
	close(fd);
	return status;
}

int
main(int argc, char **argv)
{
	char	 req[4096];
	double	*lat, t0, t, total;
	int	 port, count, len, codes[6] = { 0 }, bad = 0;

	if (argc != 7 || (port = atoi(argv[1])) <= 0 || (count = atoi(argv[6])) <= 0) {
		fprintf(stderr, "usage: bench_daemon PORT TOKEN METHOD PATH BODY COUNT\n");
		return 2;
	}
	len = snprintf(req, sizeof req,
	    "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n%s",
	    argv[3], argv[4], port, argv[2], strlen(argv[5]), argv[5]);
	if (len < 0 || (size_t)len >= sizeof req) {
		fprintf(stderr, "bench_daemon: the request does not fit in %zu bytes\n",
		    sizeof req);
		return 2;
	}
	if ((lat = calloc((size_t)count, sizeof *lat)) == NULL)
		return 2;
	total = bench_daemon_now_ms();
	for (int i = 0; i < count; i++) {
		int	s;

		t0 = bench_daemon_now_ms();
		s = bench_daemon_one(port, req, (size_t)len);
		t = bench_daemon_now_ms();
		lat[i] = t - t0;
		if (s < 100 || s > 599) {
			codes[0]++;
			bad = 1;
		} else {
			codes[s / 100]++;
			if (s / 100 != 2)
				bad = 1;
		}
	}
	total = bench_daemon_now_ms() - total;
	qsort(lat, (size_t)count, sizeof *lat, bench_daemon_cmp);
	printf("total_ms %.1f p50_ms %.2f p99_ms %.2f max_ms %.2f statuses 2xx:%d 4xx:%d "
	    "5xx:%d failed:%d\n", total, lat[count / 2],
	    lat[(size_t)((count - 1) * 0.99)], lat[count - 1], codes[2], codes[4], codes[5],
	    codes[0]);
	free(lat);
	return bad;
}
