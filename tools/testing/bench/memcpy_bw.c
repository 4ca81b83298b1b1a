// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy_bw: how fast one memcpy() of a payload goes, the limit for a
 * software RDMA device, which must copy every payload at least once.
 *
 *   memcpy_bw [-k] [-t SECONDS] SIZE...
 *
 * For each SIZE (bytes) it copies SIZE bytes from one buffer to another
 * over and over for about SECONDS (default 1) and prints one line,
 * "SIZE MB/s", with MB = 10^6 bytes as perftest counts them.  The same two
 * buffers are used every time, as perftest reuses its buffers, so the
 * caches are as warm as they are for the RDMA device.
 *
 * -k copies with "rep movsb" instead of the C library's memcpy(): what
 * the x86 kernel's memcpy() and copy_{to,from}_user() do on CPUs with
 * ERMS/FSRM, as QEMU's "-cpu max" has.  Under TCG the two differ a lot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void *(*copy_fn)(void *, const void *, size_t);

/* x86 only, as sroce's test machines are. */
static void *copy_rep_movsb(void *dst, const void *src, size_t n)
{
	void *ret = dst;

	__asm__ __volatile__("rep movsb"
			     : "+D" (dst), "+S" (src), "+c" (n)
			     : : "memory");
	return ret;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds taken by COUNT copies of SIZE bytes. */
static double copy_time(copy_fn copy, char *dst, const char *src,
			size_t size, long count)
{
	double start = now();
	long i;

	for (i = 0; i < count; i++) {
		copy(dst, src, size);
		/* The compiler must assume dst is read: keep every copy. */
		__asm__ __volatile__("" : : "r" (dst) : "memory");
	}
	return now() - start;
}

/* MB/s of copies of SIZE bytes, measured for about SECS seconds. */
static double measure(copy_fn copy, char *dst, const char *src,
		      size_t size, double secs)
{
	long count = 1;
	double t;

	/* Find a count that takes a tenth of the time, then scale it up. */
	while ((t = copy_time(copy, dst, src, size, count)) < secs / 10)
		count *= 2;
	count = (long)(count * secs / t) + 1;
	t = copy_time(copy, dst, src, size, count);
	return (double)size * count / t / 1e6;
}

static void bad_usage(void)
{
	fprintf(stderr, "usage: memcpy_bw [-k] [-t SECONDS] SIZE...\n");
	exit(2);
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > (1ULL << 30)) {
		fprintf(stderr, "memcpy_bw: bad size '%s' (1 to 2^30 bytes)\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	copy_fn copy = memcpy;
	double secs = 1.0;
	size_t max = 0, size;
	char *src, *dst;
	int opt, i;

	while ((opt = getopt(argc, argv, "kt:")) != -1) {
		switch (opt) {
		case 'k':
			copy = copy_rep_movsb;
			break;
		case 't':
			secs = atof(optarg);
			if (secs <= 0)
				bad_usage();
			break;
		default:
			bad_usage();
		}
	}
	if (optind >= argc)
		bad_usage();
	for (i = optind; i < argc; i++) {
		size = parse_size(argv[i]);
		if (size > max)
			max = size;
	}

	/* Page-aligned, as perftest's buffers are; touched before timing. */
	if (posix_memalign((void **)&src, 4096, max) ||
	    posix_memalign((void **)&dst, 4096, max)) {
		fprintf(stderr, "memcpy_bw: out of memory\n");
		return 1;
	}
	memset(src, 0xa5, max);
	memset(dst, 0, max);

	for (i = optind; i < argc; i++) {
		size = parse_size(argv[i]);
		printf("%zu %.2f\n", size, measure(copy, dst, src, size, secs));
		fflush(stdout);
	}
	free(src);
	free(dst);
	return 0;
}
