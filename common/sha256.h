/*
 * SHA-256 (FIPS 180-4), small and dependency-free: records keep a hash of a command
 * they store cut short, so the whole command can still be recognised and compared.
 */
#ifndef CW_SHA256_H
#define CW_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST	32
#define SHA256_HEX	(2 * SHA256_DIGEST + 1)

struct sha256 {
	uint32_t	h[8];
	uint64_t	len;		/* bytes hashed so far */
	unsigned char	buf[64];
	size_t		nbuf;
};

void	sha256_init(struct sha256 *);
void	sha256_update(struct sha256 *, const void *, size_t);
void	sha256_final(struct sha256 *, unsigned char out[SHA256_DIGEST]);
/* The lowercase hex digest of len bytes of p into hex (SHA256_HEX bytes). */
void	sha256_hex(const void *p, size_t len, char hex[SHA256_HEX]);

#endif
