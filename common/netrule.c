/*
 * Egress rules: parsing, matching, and the address classes only an address rule may
 * reach. Pure functions, shared by the configuration (checking) and the runner's proxy.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netrule.h"

/* A DNS name: labels of [a-z0-9-] (and '_', seen in the wild), 1-63 bytes, not
 * starting or ending with '-'; a trailing dot is dropped by the caller. */
static int
netrule_name_ok(const char *s)
{
	size_t	 label = 0;
	char	 prev = '.';

	if (*s == '\0' || strlen(s) > NETRULE_HOST_MAX)
		return 0;
	for (; *s != '\0'; prev = *s++) {
		if (*s == '.') {
			if (label == 0 || prev == '-')
				return 0;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)*s) || *s == '-' || *s == '_'))
			return 0;
		if (*s == '-' && label == 0)
			return 0;
		if (++label > 63)
			return 0;
	}
	return label > 0 && prev != '-';
}

int
netrule_host(const char *in, char *out, size_t outlen, int *is_addr)
{
	struct in6_addr	 a6;
	struct in_addr	 a4;
	size_t		 len = strlen(in), i;
	char		 buf[NETRULE_HOST_MAX + 2];

	*is_addr = 0;
	if (outlen <= NETRULE_HOST_MAX || len == 0 || len > NETRULE_HOST_MAX + 1)
		return -1;
	if (in[0] == '[') {
		if (in[len - 1] != ']' || len - 2 >= sizeof buf)
			return -1;
		memcpy(buf, in + 1, len - 2);
		buf[len - 2] = '\0';
		if (inet_pton(AF_INET6, buf, &a6) != 1)
			return -1;
		inet_ntop(AF_INET6, &a6, out, (socklen_t)outlen);
		*is_addr = 1;
		return 0;
	}
	for (i = 0; i < len; i++)
		buf[i] = (char)tolower((unsigned char)in[i]);
	buf[len] = '\0';
	if (len > 1 && buf[len - 1] == '.')
		buf[--len] = '\0';
	if (inet_pton(AF_INET6, buf, &a6) == 1) {
		inet_ntop(AF_INET6, &a6, out, (socklen_t)outlen);
		*is_addr = 1;
		return 0;
	}
	/* Only the dotted quad: inet_aton's "127.1" and "0x7f.1" are names here, and fail. */
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		inet_ntop(AF_INET, &a4, out, (socklen_t)outlen);
		*is_addr = 1;
		return 0;
	}
	/* A name made only of digits and dots that is not a dotted quad is refused. */
	if (strspn(buf, "0123456789.") == len || strncmp(buf, "0x", 2) == 0)
		return -1;
	if (!netrule_name_ok(buf))
		return -1;
	snprintf(out, outlen, "%s", buf);
	return 0;
}

int
netrule_parse(const char *s, struct netrule *r, char *err, size_t errlen)
{
	const char	*colon;
	char		 host[NETRULE_HOST_MAX + 3], *end;
	size_t		 hl;
	long		 port;

	memset(r, 0, sizeof *r);
	if (s[0] == '[')
		colon = strstr(s, "]:") != NULL ? strstr(s, "]:") + 1 : NULL;
	else
		colon = strrchr(s, ':');
	if (colon == NULL || colon == s || colon[1] == '\0' ||
	    (hl = (size_t)(colon - s)) >= sizeof host) {
		snprintf(err, errlen, "'%.300s' is not host:port (a port, or *, is required)",
		    s);
		return -1;
	}
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (strcmp(colon + 1, "*") == 0)
		r->port = 0;
	else {
		port = strtol(colon + 1, &end, 10);
		if (*end != '\0' || port < 1 || port > 65535 || !isdigit((unsigned char)colon[1])) {
			snprintf(err, errlen, "'%.300s': the port must be 1-65535 or *", s);
			return -1;
		}
		r->port = (int)port;
	}
	if (strcmp(host, "*") == 0)
		snprintf(r->host, sizeof r->host, "*");
	else if (strncmp(host, "*.", 2) == 0) {
		char	 dom[NETRULE_HOST_MAX + 1];
		int	 is_addr;

		if (netrule_host(host + 2, dom, sizeof dom, &is_addr) == -1 || is_addr ||
		    strchr(dom, '.') == NULL || strlen(dom) + 2 >= sizeof r->host) {
			snprintf(err, errlen, "'%.300s': *. must be followed by a domain with "
			    "a dot (*.example.com)", s);
			return -1;
		}
		snprintf(r->host, sizeof r->host, "*.%s", dom);
	} else if (netrule_host(host, r->host, sizeof r->host, &r->addr) == -1) {
		snprintf(err, errlen, "'%.300s': '%.260s' is not a host name or an IP address",
		    s, host);
		return -1;
	}
	if (r->port == 0)
		snprintf(r->text, sizeof r->text, "%s%s%s:*", r->addr &&
		    strchr(r->host, ':') ? "[" : "", r->host, r->addr && strchr(r->host, ':') ?
		    "]" : "");
	else
		snprintf(r->text, sizeof r->text, "%s%s%s:%d", r->addr &&
		    strchr(r->host, ':') ? "[" : "", r->host, r->addr && strchr(r->host, ':') ?
		    "]" : "", r->port);
	return 0;
}

int
netrule_match(const struct netrule *r, const char *host, int port)
{
	size_t	 hl, sl;
	int	 is_addr;

	if (r->port != 0 && r->port != port)
		return 0;
	/* Wildcards cover names only: an address is reached by naming it. */
	is_addr = strchr(host, ':') != NULL || strspn(host, "0123456789.") == strlen(host);
	if (strcmp(r->host, "*") == 0)
		return !is_addr;
	if (strncmp(r->host, "*.", 2) == 0) {
		hl = strlen(host);
		sl = strlen(r->host + 1);	/* ".example.com" */
		return !is_addr && hl > sl && strcmp(host + hl - sl, r->host + 1) == 0;
	}
	return strcmp(r->host, host) == 0;
}

const struct netrule *
netrule_find(const struct netrule *rules, size_t n, const char *host, int port)
{
	for (size_t i = 0; i < n; i++)
		if (netrule_match(&rules[i], host, port))
			return &rules[i];
	return NULL;
}

static int
netrule_private4(uint32_t a)
{
	static const struct { uint32_t net, mask; } nets[] = {
		{ 0x00000000, 0xff000000 },	/* 0/8 "this network" */
		{ 0x0a000000, 0xff000000 },	/* 10/8 */
		{ 0x64400000, 0xffc00000 },	/* 100.64/10 shared */
		{ 0x7f000000, 0xff000000 },	/* 127/8 loopback */
		{ 0xa9fe0000, 0xffff0000 },	/* 169.254/16 link-local (cloud metadata) */
		{ 0xac100000, 0xfff00000 },	/* 172.16/12 */
		{ 0xc0000000, 0xffffff00 },	/* 192.0.0/24 */
		{ 0xc0a80000, 0xffff0000 },	/* 192.168/16 */
		{ 0xc6120000, 0xfffe0000 },	/* 198.18/15 benchmarking */
		{ 0xe0000000, 0xf0000000 },	/* 224/4 multicast */
		{ 0xf0000000, 0xf0000000 },	/* 240/4 reserved, broadcast */
	};

	for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++)
		if ((a & nets[i].mask) == nets[i].net)
			return 1;
	return 0;
}

int
netrule_private(const struct sockaddr *sa)
{
	const struct sockaddr_in6	*s6;
	const uint8_t			*b;
	uint32_t			 v4;

	if (sa == NULL)
		return 1;
	if (sa->sa_family == AF_INET)
		return netrule_private4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return 1;
	s6 = (const struct sockaddr_in6 *)sa;
	b = s6->sin6_addr.s6_addr;
	if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) || IN6_IS_ADDR_V4COMPAT(&s6->sin6_addr) ||
	    (b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b)) {
		/* ::ffff:a.b.c.d, ::a.b.c.d, 64:ff9b::a.b.c.d (NAT64) carry an IPv4 address. */
		memcpy(&v4, b + 12, 4);
		return netrule_private4(ntohl(v4));
	}
	return IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr) || IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr) ||
	    IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) || IN6_IS_ADDR_SITELOCAL(&s6->sin6_addr) ||
	    IN6_IS_ADDR_MULTICAST(&s6->sin6_addr) || (b[0] & 0xfe) == 0xfc ||
	    (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8);
}

int
netrule_addr_ok(const struct netrule *r, const struct sockaddr *sa)
{
	char	 text[INET6_ADDRSTRLEN];

	if (!netrule_private(sa))
		return 1;
	if (!r->addr)
		return 0;
	/* An address rule reaches exactly the address it names. */
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, text,
		    sizeof text);
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, text,
		    sizeof text);
	return strcmp(text, r->host) == 0;
}
