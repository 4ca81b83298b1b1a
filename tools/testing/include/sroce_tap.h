/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the test programs (tools/testing/hostile, tools/testing/mcast)
 * share: TAP output ("ok N - ...", "# ..." diagnostics, "Bail out!", the
 * plan "1..N" at the end), a monotonic clock, and opening a device by
 * name.  Header-only: each program is one .c file built by a one-line
 * rule; include it once, from that file.
 */
#ifndef SROCE_TAP_H
#define SROCE_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

static int tap_n, tap_failed;

static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static bool check(bool cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

static int tap_done(void)
{
	printf("1..%d\n", tap_n);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

static void bail(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %d: %s)\n", errno, strerror(errno));
	fflush(stdout);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The device called @name, opened; NULL if there is none. */
static struct ibv_context *open_ctx(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

#endif /* SROCE_TAP_H */
