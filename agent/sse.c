/* Server-Sent Events, incrementally: see sse.h. */
#include <stdlib.h>
#include <string.h>

#include "sse.h"

struct sse {
	size_t		 max;
	sse_event_fn	*fn;
	void		*arg;
	char		*line;		/* the line being read */
	size_t		 linelen;
	int		 after_cr;	/* the last byte was CR: a following LF is its pair */
	char		*data;		/* the event's data so far */
	size_t		 datalen;
	int		 have_data;
	char		 event[64];
};

struct sse *
sse_new(size_t max, sse_event_fn *fn, void *arg)
{
	struct sse	*s;

	if ((s = calloc(1, sizeof *s)) == NULL)
		return NULL;
	s->max = max;
	s->fn = fn;
	s->arg = arg;
	if ((s->line = malloc(max + 1)) == NULL || (s->data = malloc(max + 1)) == NULL) {
		sse_free(s);
		return NULL;
	}
	return s;
}

void
sse_free(struct sse *s)
{
	if (s == NULL)
		return;
	free(s->line);
	free(s->data);
	free(s);
}

static int
sse_dispatch(struct sse *s)
{
	int	 rc = 0;

	if (s->have_data) {
		s->data[s->datalen] = '\0';
		rc = s->fn(s->arg, s->event[0] != '\0' ? s->event : "message", s->data,
		    s->datalen);
	}
	s->datalen = 0;
	s->have_data = 0;
	s->event[0] = '\0';
	return rc;
}

static int
sse_line(struct sse *s)
{
	const char	*value;
	size_t		 flen, vlen;
	char		*colon;

	if (s->linelen == 0)
		return sse_dispatch(s);
	s->line[s->linelen] = '\0';
	if (s->line[0] == ':')
		return 0;
	if ((colon = memchr(s->line, ':', s->linelen)) != NULL) {
		flen = (size_t)(colon - s->line);
		value = colon + 1;
		if (*value == ' ')
			value++;
	} else {
		flen = s->linelen;
		value = s->line + s->linelen;
	}
	vlen = (size_t)(s->line + s->linelen - value);
	if (flen == 5 && memcmp(s->line, "event", 5) == 0) {
		if (vlen >= sizeof s->event)
			vlen = sizeof s->event - 1;
		memcpy(s->event, value, vlen);
		s->event[vlen] = '\0';
	} else if (flen == 4 && memcmp(s->line, "data", 4) == 0) {
		if (s->datalen + vlen + 1 > s->max)
			return -1;
		if (s->have_data)
			s->data[s->datalen++] = '\n';
		memcpy(s->data + s->datalen, value, vlen);
		s->datalen += vlen;
		s->have_data = 1;
	}
	/* id and retry mean nothing to a single request's stream; others are ignored. */
	return 0;
}

int
sse_feed(struct sse *s, const char *buf, size_t len)
{
	size_t	 i;
	char	 c;

	for (i = 0; i < len; i++) {
		c = buf[i];
		if (c == '\n' && s->after_cr) {
			s->after_cr = 0;
			continue;
		}
		s->after_cr = c == '\r';
		if (c == '\n' || c == '\r') {
			if (sse_line(s) == -1)
				return -1;
			s->linelen = 0;
			continue;
		}
		if (s->linelen >= s->max)
			return -1;
		s->line[s->linelen++] = c;
	}
	return 0;
}
