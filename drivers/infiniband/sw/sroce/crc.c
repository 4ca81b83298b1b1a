// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce: the CRC-32 behind the ICRC, chosen by measuring at load.
 *
 * The kernels sroce runs on offer the ICRC's CRC-32 (the Ethernet one,
 * reflected, no final inversion at this level) twice over: crc32_le(),
 * which on x86 before 6.14 is the generic table-driven code, and the
 * crypto API's "crc32" shash, whose best driver on x86 is crc32-pclmul
 * (carry-less multiplication, several times faster on hardware, but
 * emulated and slower under QEMU's TCG).  Which one wins depends on the
 * machine, not on the kernel, so like the RAID-6 and XOR code at boot
 * sroce times each candidate on a packet-sized buffer when the module
 * loads and uses the fastest; icrc_impl= at load forces one, and reading
 * the parameter tells which one is in use.  All candidates compute the
 * same function, so switching between them never changes a result.
 *
 * The same measurement also times the receive path's copies of a 4 KiB
 * payload (mem.c: copy_page() for a whole page, else memcpy()).  Nothing
 * is chosen by them; the load_timing parameter shows them next to the
 * CRC figures because, with those, they are the per-byte cost of a
 * software RoCE device on this CPU (one copy, and the ICRC on each end
 * of a wire), which the benchmarks compare sroce's bandwidth with
 * (Documentation/benchmarks.rst), measured in the boot it ran in.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <kunit/visibility.h>

#include "crc.h"

/* The measurement: a 4 KiB payload (the largest RoCE MTU), best of 3. */
#define SROCE_CRC_BENCH_LEN	4096
#define SROCE_CRC_BENCH_NS	(2 * NSEC_PER_MSEC)
#define SROCE_CRC_BENCH_ROUNDS	3

static u32 sroce_crc_lib(u32 crc, const u8 *p, unsigned int len)
{
	return crc32_le(crc, p, len);
}

/* The crypto API's best "crc32" driver; allocated at load, if any. */
static struct crypto_shash *sroce_crc_tfm;

/*
 * The crc32 shashes keep their register as their whole state (statesize
 * = descsize = 4 bytes): importing @crc continues a running CRC, which
 * is what a packet that spans frags needs.
 */
static u32 sroce_crc_crypto(u32 crc, const u8 *p, unsigned int len)
{
	SHASH_DESC_ON_STACK(desc, sroce_crc_tfm);
	u32 out = crc;

	desc->tfm = sroce_crc_tfm;
	if (crypto_shash_import(desc, &crc) ||
	    crypto_shash_update(desc, p, len) ||
	    crypto_shash_export(desc, &out)) {
		/* Not expected of a crc32 shash; stay correct regardless. */
		out = crc32_le(crc, p, len);
	}
	shash_desc_zero(desc);
	return out;
}

struct sroce_crc_impl sroce_crc_impls[SROCE_CRC_NR] = {
	[SROCE_CRC_LIB] = { .name = "crc32_le", .update = sroce_crc_lib,
			    .usable = true },
	[SROCE_CRC_CRYPTO] = { .name = "crypto", .update = sroce_crc_crypto },
};
EXPORT_SYMBOL_IF_KUNIT(sroce_crc_impls);

/* The one in use; every candidate gives the same CRC, so a switch is safe. */
static struct sroce_crc_impl *sroce_crc_active = &sroce_crc_impls[SROCE_CRC_LIB];

/* icrc_impl=: -1 for "auto", else the index of the forced candidate. */
static int sroce_crc_forced = -1;

/**
 * sroce_crc32() - continue a CRC-32 with the chosen implementation
 * @crc: the register so far
 * @p: the bytes
 * @len: how many
 *
 * Return: the register after @len bytes at @p, as crc32_le() gives it.
 */
u32 sroce_crc32(u32 crc, const void *p, unsigned int len)
{
	return READ_ONCE(sroce_crc_active)->update(crc, p, len);
}

/**
 * sroce_crc_use() - switch the implementation in use
 * @i: the index of a usable candidate in sroce_crc_impls
 *
 * Return: 0, or -EINVAL if @i is not one or is not usable here.
 */
int sroce_crc_use(unsigned int i)
{
	if (i >= SROCE_CRC_NR || !sroce_crc_impls[i].usable)
		return -EINVAL;
	WRITE_ONCE(sroce_crc_active, &sroce_crc_impls[i]);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_crc_use);

/** sroce_crc_in_use() - the index of the implementation in use */
unsigned int sroce_crc_in_use(void)
{
	return READ_ONCE(sroce_crc_active) - sroce_crc_impls;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_crc_in_use);

/*
 * MB/s of @pass over the SROCE_CRC_BENCH_LEN bytes at @buf: the best of
 * a few rounds of about 2 ms each.  @pass is given @what and returns a
 * value of its work, kept so that the loop is not optimised away.
 */
static unsigned int sroce_measure(u32 (*pass)(const void *what, u8 *buf,
					      u32 acc),
				  const void *what, u8 *buf)
{
	u64 best = 0, bytes, start, ns;
	u32 acc = ~0U;
	int round;

	for (round = 0; round < SROCE_CRC_BENCH_ROUNDS; round++) {
		bytes = 0;
		start = ktime_get_ns();
		do {
			acc = pass(what, buf, acc);
			bytes += SROCE_CRC_BENCH_LEN;
			ns = ktime_get_ns() - start;
		} while (ns < SROCE_CRC_BENCH_NS);
		best = max(best, div64_u64(bytes * 1000, ns));
		cond_resched();
	}
	OPTIMIZER_HIDE_VAR(acc);
	return min_t(u64, best, UINT_MAX);
}

static u32 sroce_crc_pass(const void *what, u8 *buf, u32 crc)
{
	const struct sroce_crc_impl *impl = what;

	return impl->update(crc, buf, SROCE_CRC_BENCH_LEN);
}

/* The copies of the receive path, from the first page of @buf to the second. */
static u32 sroce_copy_page_pass(const void *what, u8 *buf, u32 acc)
{
	copy_page(buf + PAGE_SIZE, buf);
	return acc + buf[PAGE_SIZE];
}

static u32 sroce_memcpy_pass(const void *what, u8 *buf, u32 acc)
{
	size_t len = SROCE_CRC_BENCH_LEN;

	/* A length the compiler cannot see, as the data path's. */
	OPTIMIZER_HIDE_VAR(len);
	memcpy(buf + PAGE_SIZE, buf, len);
	return acc + buf[PAGE_SIZE];
}

/* The receive copies, timed for load_timing (mbps 0 if not timed). */
static struct sroce_copy_timing {
	const char *name;
	u32 (*pass)(const void *what, u8 *buf, u32 acc);
	unsigned int mbps;
} sroce_copies[] = {
	{ .name = "copy_page", .pass = sroce_copy_page_pass },
	{ .name = "memcpy", .pass = sroce_memcpy_pass },
};

static void sroce_copy_measure(u8 *buf)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sroce_copies); i++)
		sroce_copies[i].mbps = sroce_measure(sroce_copies[i].pass,
						     NULL, buf);
}

static void sroce_crc_probe_crypto(void)
{
	struct sroce_crc_impl *impl = &sroce_crc_impls[SROCE_CRC_CRYPTO];
	struct crypto_shash *tfm;

	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm))
		return;
	if (crypto_shash_statesize(tfm) != sizeof(u32) ||
	    crypto_shash_digestsize(tfm) != sizeof(u32)) {
		crypto_free_shash(tfm);
		return;
	}
	sroce_crc_tfm = tfm;
	impl->driver = crypto_shash_driver_name(tfm);
	impl->usable = true;
}

/*
 * The fastest usable candidate, each measured once on @buf.  crc32_le()
 * is kept unless another beats it by more than an eighth: the crypto
 * API's per-call cost weighs more on small packets than on the 4 KiB
 * measured, and a tie (crc32-generic is crc32_le() behind the crypto
 * API) is noise.
 */
static unsigned int sroce_crc_fastest(u8 *buf)
{
	unsigned int i, best = SROCE_CRC_LIB;
	struct sroce_crc_impl *impl;
	u64 bar;

	for (i = 0; i < SROCE_CRC_NR; i++) {
		impl = &sroce_crc_impls[i];
		if (!impl->usable)
			continue;
		impl->mbps = sroce_measure(sroce_crc_pass, impl, buf);
		bar = sroce_crc_impls[best].mbps;
		if (i != best && impl->mbps > bar + bar / 8)
			best = i;
	}
	return best;
}

static void sroce_crc_report(void)
{
	const struct sroce_crc_impl *use = READ_ONCE(sroce_crc_active);
	const struct sroce_crc_impl *impl;
	char line[128] = "";
	int n = 0, i;

	for (i = 0; i < SROCE_CRC_NR; i++) {
		impl = &sroce_crc_impls[i];
		if (impl->usable)
			n += scnprintf(line + n, sizeof(line) - n, " %s%s%s %u MB/s;",
				       impl->name, impl->driver ? ":" : "",
				       impl->driver ?: "", impl->mbps);
	}
	if (n)
		line[n - 1] = '\0';
	pr_info("ICRC CRC-32:%s: using %s%s\n", line, use->name,
		sroce_crc_forced >= 0 ? " (icrc_impl=)" : "");
}

/**
 * sroce_crc_init() - find the candidates, time them, choose one
 *
 * Return: 0, or -ENOMEM for the measurement buffer, or -EINVAL if
 * icrc_impl= forces a candidate this kernel does not have.
 */
int sroce_crc_init(void)
{
	unsigned int use;
	u8 *buf;

	sroce_crc_probe_crypto();
	if (sroce_crc_forced >= 0 && !sroce_crc_impls[sroce_crc_forced].usable) {
		pr_err("icrc_impl=%s: not available on this kernel\n",
		       sroce_crc_impls[sroce_crc_forced].name);
		sroce_crc_exit();
		return -EINVAL;
	}

	/* Two pages: the copies go from the first to the second. */
	BUILD_BUG_ON(SROCE_CRC_BENCH_LEN > PAGE_SIZE);
	buf = (u8 *)__get_free_pages(GFP_KERNEL, 1);
	if (!buf) {
		sroce_crc_exit();
		return -ENOMEM;
	}
	get_random_bytes(buf, SROCE_CRC_BENCH_LEN);
	use = sroce_crc_fastest(buf);
	sroce_copy_measure(buf);
	free_pages((unsigned long)buf, 1);

	if (sroce_crc_forced >= 0)
		use = sroce_crc_forced;
	WARN_ON(sroce_crc_use(use));
	sroce_crc_report();
	return 0;
}

void sroce_crc_exit(void)
{
	sroce_crc_use(SROCE_CRC_LIB);
	sroce_crc_impls[SROCE_CRC_CRYPTO].usable = false;
	if (sroce_crc_tfm)
		crypto_free_shash(sroce_crc_tfm);
	sroce_crc_tfm = NULL;
}

/* icrc_impl=auto|crc32_le|crypto at load; reads back the one in use. */
static int sroce_crc_param_set(const char *val, const struct kernel_param *kp)
{
	int i;

	if (sysfs_streq(val, "auto")) {
		sroce_crc_forced = -1;
		return 0;
	}
	for (i = 0; i < SROCE_CRC_NR; i++) {
		if (sysfs_streq(val, sroce_crc_impls[i].name)) {
			sroce_crc_forced = i;
			return 0;
		}
	}
	return -EINVAL;
}

static int sroce_crc_param_get(char *buf, const struct kernel_param *kp)
{
	const struct sroce_crc_impl *use = READ_ONCE(sroce_crc_active);

	return sysfs_emit(buf, "%s%s%s\n", use->name, use->driver ? ":" : "",
			  use->driver ?: "");
}

static const struct kernel_param_ops sroce_crc_param_ops = {
	.set = sroce_crc_param_set,
	.get = sroce_crc_param_get,
};
module_param_cb(icrc_impl, &sroce_crc_param_ops, NULL, 0444);
MODULE_PARM_DESC(icrc_impl,
		 "The ICRC's CRC-32: auto (the fastest, timed at load), crc32_le or crypto; reads back the one in use");

/*
 * load_timing: what the module timed at load on this CPU, in MB/s over
 * 4 KiB, a "name MB/s" line each: every usable ICRC candidate (named as
 * icrc_impl= names them), then the receive copies.  A measurement, not a
 * setting: it cannot be set.
 */
static int sroce_timing_param_set(const char *val,
				  const struct kernel_param *kp)
{
	return -EPERM;
}

static int sroce_timing_param_get(char *buf, const struct kernel_param *kp)
{
	const struct sroce_crc_impl *impl;
	unsigned int i;
	int n = 0;

	for (i = 0; i < SROCE_CRC_NR; i++) {
		impl = &sroce_crc_impls[i];
		if (impl->usable)
			n += sysfs_emit_at(buf, n, "%s %u\n", impl->name,
					   impl->mbps);
	}
	for (i = 0; i < ARRAY_SIZE(sroce_copies); i++)
		n += sysfs_emit_at(buf, n, "%s %u\n", sroce_copies[i].name,
				   sroce_copies[i].mbps);
	return n;
}

static const struct kernel_param_ops sroce_timing_param_ops = {
	.set = sroce_timing_param_set,
	.get = sroce_timing_param_get,
};
module_param_cb(load_timing, &sroce_timing_param_ops, NULL, 0444);
MODULE_PARM_DESC(load_timing,
		 "Read only: MB/s over 4 KiB timed at load, a line each: the ICRC candidates, then the receive copies (copy_page, memcpy)");
