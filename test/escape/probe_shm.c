/*
 * System V shared memory across the sandbox (issue 9, item 9). Outside, `plant` creates
 * a segment (mode 0600) under a key and writes a text into it, `show` prints that text,
 * `rm` removes it. Inside, `attack KEY ID` tries to find the segment by its key
 * (shmget), to attach it by the id the outside process got (shmat), and, attached, to
 * read and overwrite it. In a private IPC namespace neither the key nor the id exists.
 *
 * usage: probe_shm plant KEY TEXT | show KEY | rm KEY | attack KEY ID
 * Exit: 0 every attack refused (or plant/show/rm done), 1 one got through, 2 usage/setup.
 */
#define _GNU_SOURCE	/* strerrorname_np */
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

#include "probe_common.h"

#define PROBE_SHM_SIZE	4096

static int
probe_shm_usage(void)
{
	fprintf(stderr, "usage: probe_shm plant KEY TEXT | show KEY | rm KEY | attack KEY ID\n");
	return 2;
}

int
main(int argc, char **argv)
{
	key_t	 key;
	int	 id;
	char	*mem;

	if (argc < 3)
		return probe_shm_usage();
	key = (key_t)strtol(argv[2], NULL, 0);
	if (strcmp(argv[1], "plant") == 0 && argc == 4) {
		if ((id = shmget(key, PROBE_SHM_SIZE, IPC_CREAT | IPC_EXCL | 0600)) == -1 ||
		    (mem = shmat(id, NULL, 0)) == (void *)-1) {
			perror("probe_shm plant");
			return 2;
		}
		snprintf(mem, PROBE_SHM_SIZE, "%s", argv[3]);
		shmdt(mem);
		printf("%d\n", id);
		return 0;
	}
	if (strcmp(argv[1], "show") == 0 || strcmp(argv[1], "rm") == 0) {
		if ((id = shmget(key, 0, 0)) == -1) {
			perror("probe_shm shmget");
			return 2;
		}
		if (strcmp(argv[1], "rm") == 0)
			return shmctl(id, IPC_RMID, NULL) == -1 ? 2 : 0;
		if ((mem = shmat(id, NULL, SHM_RDONLY)) == (void *)-1) {
			perror("probe_shm shmat");
			return 2;
		}
		printf("%.*s\n", PROBE_SHM_SIZE, mem);
		shmdt(mem);
		return 0;
	}
	if (strcmp(argv[1], "attack") != 0 || argc != 4)
		return probe_shm_usage();
	id = shmget(key, 0, 0);
	probe_result("shmget_by_key", id, errno);
	id = atoi(argv[3]);
	mem = shmat(id, NULL, 0);
	probe_result("shmat_by_id", mem == (void *)-1 ? -1 : 0, errno);
	if (mem != (void *)-1) {
		printf("read: %.*s\n", 64, mem);
		snprintf(mem, PROBE_SHM_SIZE, "overwritten from inside");
		shmdt(mem);
	}
	return probe_escaped;
}
