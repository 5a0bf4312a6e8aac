#include <stdio.h>
#include <string.h>

#include "json.h"
#include "transcript.h"
#include "wire.h"
#include "autoallow.h"
#include "floor.h"
#include "wiremsg.h"

static const struct {
	const char		*name;
	enum wiremsg_type	 type;
} wiremsg_types[] = {
	{ "hello", WIREMSG_HELLO },
	{ "event", WIREMSG_EVENT },
	{ "approval_request", WIREMSG_APPROVAL_REQUEST },
	{ "usage", WIREMSG_USAGE },
	{ "log", WIREMSG_LOG },
	{ "report", WIREMSG_REPORT },
	{ "say", WIREMSG_SAY },
};

static int
wiremsg_fail(struct wiremsg *m, char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	wiremsg_free(m);
	return -1;
}

/* A string field no longer than max bytes (and not empty when required). */
static int
wiremsg_string(const cJSON *o, const char *key, size_t max, int required,
    const char **out)
{
	const cJSON	*v = cJSON_GetObjectItemCaseSensitive(o, key);

	*out = NULL;
	if (v == NULL)
		return required ? -1 : 0;
	if (!cJSON_IsString(v) || v->valuestring == NULL ||
	    strlen(v->valuestring) > max || (required && v->valuestring[0] == '\0'))
		return -1;
	*out = v->valuestring;
	return 0;
}

int
wiremsg_decode(const char *line, size_t len, struct wiremsg *m, char *err, size_t errlen)
{
	const cJSON	*v;
	int		 ver, b;

	memset(m, 0, sizeof *m);
	m->sandboxed = -1;
	m->dollars = -1;
	m->turns = -1;
	if ((m->obj = json_parse(line, len)) == NULL || !cJSON_IsObject(m->obj))
		return wiremsg_fail(m, err, errlen, "a line that is not a JSON object");
	if (json_get_int(m->obj, "v", &ver) == -1 || ver != CW_WIRE_VERSION ||
	    wiremsg_string(m->obj, "type", 64, 1, &m->type_name) == -1)
		return wiremsg_fail(m, err, errlen, "a message without \"v\":1 and a type");
	for (size_t i = 0; i < sizeof wiremsg_types / sizeof wiremsg_types[0]; i++)
		if (strcmp(m->type_name, wiremsg_types[i].name) == 0)
			m->type = wiremsg_types[i].type;
	if (json_get_bool(m->obj, "sandboxed", &b) == 0)
		m->sandboxed = b;
	switch (m->type) {
	case WIREMSG_EVENT:
		if (wiremsg_string(m->obj, "kind", WIREMSG_KIND_MAX, 1, &m->kind) == -1)
			return wiremsg_fail(m, err, errlen, "event without a kind");
		(void)wiremsg_string(m->obj, "id", WIREMSG_ID_MAX, 0, &m->id);
		break;
	case WIREMSG_APPROVAL_REQUEST:
		if (wiremsg_string(m->obj, "id", WIREMSG_ID_MAX, 1, &m->id) == -1 ||
		    wiremsg_string(m->obj, "tool", WIREMSG_TOOL_MAX, 1, &m->tool) == -1)
			return wiremsg_fail(m, err, errlen,
			    "approval_request without a valid id and tool");
		m->input = cJSON_GetObjectItemCaseSensitive(m->obj, "input");
		/* A runner from before risk levels sends none: ordinary. */
		if (wiremsg_string(m->obj, "risk", 32, 0, &m->risk) == -1 ||
		    (m->risk != NULL && floor_risk_parse(m->risk) == -1) ||
		    wiremsg_string(m->obj, "risk_rule", 64, 0, &m->risk_rule) == -1)
			return wiremsg_fail(m, err, errlen,
			    "approval_request with a bad risk or risk_rule");
		if (m->risk == NULL)
			m->risk = "ordinary";
		if (wiremsg_string(m->obj, "family", FLOOR_FAMILY_MAX - 1, 0, &m->family) ==
		    -1 || (m->family != NULL && !autoallow_family_valid(m->family)))
			return wiremsg_fail(m, err, errlen,
			    "approval_request with a bad command family");
		if ((v = cJSON_GetObjectItemCaseSensitive(m->obj, "deadline")) != NULL &&
		    cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 1e15)
			m->deadline = v->valuedouble;
		break;
	case WIREMSG_USAGE:
		if (json_get_number(m->obj, "dollars", &m->dollars) == -1 || m->dollars < 0)
			m->dollars = -1;
		if (json_get_int(m->obj, "turns", &m->turns) == -1 || m->turns < 0)
			m->turns = -1;
		break;
	case WIREMSG_LOG:
		m->text = json_get_string(m->obj, "text");
		break;
	case WIREMSG_SAY:
		/* One transcript entry of a known kind, its fields the right shapes. */
		m->entry = cJSON_GetObjectItemCaseSensitive(m->obj, "entry");
		if (!cJSON_IsObject(m->entry) || transcript_check(m->entry) == -1)
			return wiremsg_fail(m, err, errlen, "say without a valid entry");
		break;
	default:
		break;
	}
	return 0;
}

void
wiremsg_free(struct wiremsg *m)
{
	cJSON_Delete(m->obj);
	memset(m, 0, sizeof *m);
	m->sandboxed = -1;
}
