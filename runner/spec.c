#include <stdlib.h>

#include "spec.h"

void
spec_free(struct sandbox_spec *s)
{
	free(s->workdir);
	free(s->engine);
	free(s->home);
	free(s->tmpdir);
	free(s->ssh_auth_sock);
	strlist_free(&s->read_dirs);
	strlist_free(&s->write_dirs);
	strlist_free(&s->read_files);
	strlist_free(&s->write_files);
	strlist_free(&s->env);
	strlist_free(&s->hide);
}
