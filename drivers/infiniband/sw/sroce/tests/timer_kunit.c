// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the RC transport timer values (timers.h): the RNR NAK
 * timer table and the local ACK timeout.
 *
 * What it proves:
 *  - each of the 32 RNR NAK timer codes maps to the IBTA value (vol. 1,
 *    table 45), checked against the names of enum ib_rnr_timeout, which
 *    spell the value in milliseconds; only the low 5 bits of a code count;
 *  - the values grow with the code, code 0 being the longest;
 *  - in jiffies, an RNR wait is at least one jiffy and never shorter than
 *    the IBTA value;
 *  - the local ACK timeout is exactly 4.096 us * 2^n for n = 0..31, with
 *    no overflow at n = 31 (about 2.4 hours); in jiffies it is at least 1,
 *    never longer than the IBTA value rounded up to a jiffy, and (the
 *    conversion truncates) at most one jiffy shorter than it.
 */
#include <kunit/test.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <rdma/ib_verbs.h>

#include "../timers.h"

/* IB_RNR_TIMER_mmm_uu means mmm.uu ms: its value in microseconds */
#define RNR(ms, frac)	{ IB_RNR_TIMER_##ms##_##frac, #ms "." #frac }

static const struct {
	enum ib_rnr_timeout code;
	const char *ms;
} timer_ibta_rnr[] = {
	RNR(655, 36), RNR(000, 01), RNR(000, 02), RNR(000, 03), RNR(000, 04),
	RNR(000, 06), RNR(000, 08), RNR(000, 12), RNR(000, 16), RNR(000, 24),
	RNR(000, 32), RNR(000, 48), RNR(000, 64), RNR(000, 96), RNR(001, 28),
	RNR(001, 92), RNR(002, 56), RNR(003, 84), RNR(005, 12), RNR(007, 68),
	RNR(010, 24), RNR(015, 36), RNR(020, 48), RNR(030, 72), RNR(040, 96),
	RNR(061, 44), RNR(081, 92), RNR(122, 88), RNR(163, 84), RNR(245, 76),
	RNR(327, 68), RNR(491, 52),
};

#undef RNR

/* "mmm.uu" (milliseconds) in microseconds */
static u32 timer_ms_to_us(const char *s)
{
	u32 us = 0;

	for (; *s; s++)
		if (*s != '.')
			us = us * 10 + (*s - '0');
	return us * 10;
}

/* Nanoseconds in @j jiffies */
static u64 timer_jiffies_ns(unsigned long j)
{
	return div_u64((u64)j * NSEC_PER_SEC, HZ);
}

/* Every RNR code's value is the IBTA one, by the enum's names. */
static void timer_rnr_ibta_test(struct kunit *test)
{
	unsigned int i;

	KUNIT_ASSERT_EQ(test, ARRAY_SIZE(timer_ibta_rnr), 32);
	for (i = 0; i < ARRAY_SIZE(timer_ibta_rnr); i++) {
		u8 code = timer_ibta_rnr[i].code;

		KUNIT_EXPECT_EQ(test, code, i);
		KUNIT_EXPECT_EQ_MSG(test, sroce_rnr_timer_usecs(code),
				    timer_ms_to_us(timer_ibta_rnr[i].ms),
				    "code %u (%s ms)", code,
				    timer_ibta_rnr[i].ms);
	}
	/* spot checks, by hand */
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_usecs(0), 655360);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_usecs(1), 10);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_usecs(14), 1280);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_usecs(31), 491520);
}

/* Only the 5-bit field counts; values grow with the code; 0 is longest. */
static void timer_rnr_shape_test(struct kunit *test)
{
	unsigned int code;

	for (code = 0; code < 256; code++)
		KUNIT_EXPECT_EQ(test, sroce_rnr_timer_usecs(code),
				sroce_rnr_timer_usecs(code & 31));
	for (code = 2; code < 32; code++)
		KUNIT_EXPECT_GT(test, sroce_rnr_timer_usecs(code),
				sroce_rnr_timer_usecs(code - 1));
	for (code = 1; code < 32; code++)
		KUNIT_EXPECT_GT(test, sroce_rnr_timer_usecs(0),
				sroce_rnr_timer_usecs(code));
}

/* In jiffies an RNR wait is at least 1 and never shorter than IBTA's. */
static void timer_rnr_jiffies_test(struct kunit *test)
{
	unsigned int code;

	for (code = 0; code < 32; code++) {
		unsigned long j = sroce_rnr_timer_jiffies(code);
		u64 want = (u64)sroce_rnr_timer_usecs(code) * NSEC_PER_USEC;

		KUNIT_EXPECT_GE(test, j, 1UL);
		KUNIT_EXPECT_GE_MSG(test, timer_jiffies_ns(j), want,
				    "code %u: %lu jiffies", code, j);
		/* and not more than a jiffy longer */
		KUNIT_EXPECT_LT_MSG(test, timer_jiffies_ns(j),
				    want + timer_jiffies_ns(1),
				    "code %u: %lu jiffies", code, j);
		KUNIT_EXPECT_EQ(test, sroce_rnr_timer_jiffies(code + 32), j);
	}
}

/* The local ACK timeout is 4.096 us * 2^n, exactly, for all 32 codes. */
static void timer_ack_ns_test(struct kunit *test)
{
	unsigned int n;

	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(0), 4096ULL);
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(1), 8192ULL);
	/* 14: 67.108864 ms, the common default of rdma_cm users */
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(14), 67108864ULL);
	/* 31: 8796.093022208 s, no overflow */
	KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(31), 8796093022208ULL);
	for (n = 1; n < 32; n++)
		KUNIT_EXPECT_EQ(test, sroce_ack_timeout_ns(n),
				2 * sroce_ack_timeout_ns(n - 1));
}

/*
 * In jiffies: at least 1; never longer than the IBTA value rounded up to
 * a jiffy; shorter by less than one jiffy at most (nsecs_to_jiffies()
 * truncates).
 */
static void timer_ack_jiffies_test(struct kunit *test)
{
	u64 jiffy = timer_jiffies_ns(1);
	unsigned int n;

	for (n = 1; n < 32; n++) {
		unsigned long j = sroce_ack_timeout_jiffies(n);
		u64 ns = sroce_ack_timeout_ns(n);

		KUNIT_EXPECT_GE(test, j, 1UL);
		KUNIT_EXPECT_LE_MSG(test, timer_jiffies_ns(j),
				    max(ns + jiffy - 1, jiffy),
				    "timeout %u: %lu jiffies", n, j);
		KUNIT_EXPECT_GT_MSG(test, timer_jiffies_ns(j) + jiffy, ns,
				    "timeout %u: %lu jiffies", n, j);
		if (n > 1)
			KUNIT_EXPECT_GE(test, j, sroce_ack_timeout_jiffies(n - 1));
	}
	kunit_info(test, "HZ=%d: timeout 14 is %lu jiffies, 31 is %lu\n", HZ,
		   sroce_ack_timeout_jiffies(14), sroce_ack_timeout_jiffies(31));
}

static struct kunit_case sroce_timer_cases[] = {
	KUNIT_CASE(timer_rnr_ibta_test),
	KUNIT_CASE(timer_rnr_shape_test),
	KUNIT_CASE(timer_rnr_jiffies_test),
	KUNIT_CASE(timer_ack_ns_test),
	KUNIT_CASE(timer_ack_jiffies_test),
	{}
};

static struct kunit_suite sroce_timer_suite = {
	.name = "sroce_timer",
	.test_cases = sroce_timer_cases,
};

kunit_test_suites(&sroce_timer_suite);
