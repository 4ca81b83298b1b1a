/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The CRC-32 behind the ICRC (crc.c): the candidates the kernel offers,
 * timed at load, the fastest in use.
 */
#ifndef SROCE_CRC_H
#define SROCE_CRC_H

#include <linux/types.h>

enum sroce_crc_index {
	SROCE_CRC_LIB,		/* crc32_le() */
	SROCE_CRC_CRYPTO,	/* the crypto API's best "crc32" shash */
	SROCE_CRC_NR,
};

/**
 * struct sroce_crc_impl - one way to compute the CRC-32
 * @name: what icrc_impl= calls it
 * @driver: the crypto driver behind it (e.g. "crc32-pclmul"), or NULL
 * @update: continue a CRC-32 register over some bytes, as crc32_le()
 * @usable: this kernel has it
 * @mbps: what it did at load, on 4 KiB (0 if not timed)
 */
struct sroce_crc_impl {
	const char *name;
	const char *driver;
	u32 (*update)(u32 crc, const u8 *p, unsigned int len);
	bool usable;
	unsigned int mbps;
};

extern struct sroce_crc_impl sroce_crc_impls[SROCE_CRC_NR];

u32 sroce_crc32(u32 crc, const void *p, unsigned int len);
int sroce_crc_use(unsigned int i);
unsigned int sroce_crc_in_use(void);
int sroce_crc_init(void);
void sroce_crc_exit(void);

#endif /* SROCE_CRC_H */
