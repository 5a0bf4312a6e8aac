/*
 * cwctl template export NAME [-o FILE] | import FILE [--repo DIR]: a task's shareable
 * definition (name, prompt, schedule: no engine, mode, budget, key or path outside a
 * repository), and bringing one in, disabled with a security preview like a
 * repository job (SPEC W2).
 */
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "cwctl.h"
#include "jobspec.h"
#include "json.h"

static int
cwctl_template_usage(void)
{
	fprintf(stderr,
	    "usage: cwctl template export NAME [-o FILE.json]\n"
	    "       cwctl template import FILE.{json,yaml} [--repo DIR] [--json]\n");
	return CWCTL_EXIT_USAGE;
}

static int
cwctl_template_export(const char *task, const char *file)
{
	char	 path[256], name[200], *text;
	cJSON	*o = NULL;
	FILE	*f;
	int	 rc;

	if (client_escape(task, name, sizeof name) == -1)
		return cwctl_template_usage();
	snprintf(path, sizeof path, "/api/tasks/%s/template", name);
	if ((rc = client_call("GET", path, NULL, &o)) != 0)
		return rc;
	text = cJSON_Print(o);
	cJSON_Delete(o);
	if (text == NULL)
		return CWCTL_EXIT_FAILURE;
	if (file == NULL) {
		printf("%s\n", text);
		cJSON_free(text);
		return CWCTL_EXIT_OK;
	}
	if ((f = fopen(file, "wx")) == NULL) {
		fprintf(stderr, "cwctl: %s: %s\n", file, strerror(errno));
		cJSON_free(text);
		return CWCTL_EXIT_FAILURE;
	}
	fprintf(f, "%s\n", text);
	cJSON_free(text);
	if (fclose(f) != 0) {
		fprintf(stderr, "cwctl: %s: %s\n", file, strerror(errno));
		unlink(file);
		return CWCTL_EXIT_FAILURE;
	}
	fprintf(stderr, "wrote %s\n", file);
	return CWCTL_EXIT_OK;
}

/* The file, a regular one of at most JOBSPEC_MAX_BYTES, NUL-terminated. */
static char *
cwctl_template_read(const char *file)
{
	struct stat	 st;
	char		*buf;
	ssize_t		 n;
	size_t		 off = 0;
	int		 fd;

	if ((fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) == -1) {
		fprintf(stderr, "cwctl: %s: %s\n", file, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "cwctl: %s: not a regular file\n", file);
		close(fd);
		return NULL;
	}
	if (st.st_size > JOBSPEC_MAX_BYTES) {
		fprintf(stderr, "cwctl: %s: (file): larger than %d bytes\n", file,
		    JOBSPEC_MAX_BYTES);
		close(fd);
		return NULL;
	}
	if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	while (off < (size_t)st.st_size &&
	    (n = read(fd, buf + off, (size_t)st.st_size - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = '\0';
	if (strlen(buf) != off) {
		fprintf(stderr, "cwctl: %s: (file): holds a NUL byte: not a text file\n", file);
		free(buf);
		return NULL;
	}
	return buf;
}

static int
cwctl_template_import(const char *file, const char *repo, int json)
{
	char	 real[PATH_MAX], *text;
	cJSON	*b, *o = NULL;
	int	 rc;

	if ((text = cwctl_template_read(file)) == NULL)
		return CWCTL_EXIT_FAILURE;
	b = cJSON_CreateObject();
	json_add_string(b, "file", file);
	json_add_string(b, "text", text);
	free(text);
	if (repo != NULL) {
		if (realpath(repo, real) == NULL) {
			fprintf(stderr, "cwctl: %s: %s\n", repo, strerror(errno));
			cJSON_Delete(b);
			return CWCTL_EXIT_FAILURE;
		}
		json_add_string(b, "repo", real);
	}
	if ((rc = client_send("POST", "/api/templates", b, &o)) != 0)
		return rc;
	if (json)
		cwctl_print_json(o);
	else
		printf("task %s imported, disabled: review it with 'cwctl jobs preview %s', "
		    "then 'cwctl jobs enable %s'\n", cwctl_vis(json_get_string(o, "created")),
		    cwctl_vis(json_get_string(o, "created")),
		    cwctl_vis(json_get_string(o, "created")));
	cJSON_Delete(o);
	return CWCTL_EXIT_OK;
}

int
cwctl_template(int argc, char **argv)
{
	const char	*pos = NULL, *out = NULL, *repo = NULL;
	int		 json = 0;

	if (argc < 2)
		return cwctl_template_usage();
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--repo") == 0 && i + 1 < argc)
			repo = argv[++i];
		else if (argv[i][0] == '-' || pos != NULL)
			return cwctl_template_usage();
		else
			pos = argv[i];
	}
	if (pos == NULL)
		return cwctl_template_usage();
	if (strcmp(argv[1], "export") == 0 && repo == NULL)
		return cwctl_template_export(pos, out);
	if (strcmp(argv[1], "import") == 0 && out == NULL)
		return cwctl_template_import(pos, repo, json);
	return cwctl_template_usage();
}
