// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit suite for the RC requester's congestion window (cwnd.h).
 *
 * What it proves:
 *  - a QP starts with the whole window, and ACKs alone never take it
 *    past SROCE_MAX_UNACKED_PSNS;
 *  - a sequence NAK halves it, a timeout quarters it, and neither takes
 *    it below SROCE_CWND_MIN however many come in a row;
 *  - after a loss it grows a packet per packet acked up to the threshold
 *    (slow start), then a packet per window acked, and reaches the whole
 *    window again.
 */
#include <kunit/test.h>

#include "../cwnd.h"

static void cwnd_start_test(struct kunit *test)
{
	struct sroce_cwnd c;

	sroce_cwnd_init(&c);
	KUNIT_EXPECT_EQ(test, c.window, SROCE_MAX_UNACKED_PSNS);
	sroce_cwnd_acked(&c, 1000);
	sroce_cwnd_acked(&c, 0xffffff);
	KUNIT_EXPECT_EQ(test, c.window, SROCE_MAX_UNACKED_PSNS);
}

static void cwnd_loss_test(struct kunit *test)
{
	struct sroce_cwnd c;
	int i;

	sroce_cwnd_init(&c);
	sroce_cwnd_loss(&c, false);
	KUNIT_EXPECT_EQ(test, c.window, SROCE_MAX_UNACKED_PSNS / 2);
	sroce_cwnd_loss(&c, false);
	KUNIT_EXPECT_EQ(test, c.window, SROCE_MAX_UNACKED_PSNS / 4);
	sroce_cwnd_loss(&c, true);
	KUNIT_EXPECT_EQ(test, c.window, SROCE_MAX_UNACKED_PSNS / 16);
	KUNIT_EXPECT_EQ(test, c.ssthresh, SROCE_MAX_UNACKED_PSNS / 8);
	for (i = 0; i < 30; i++) {
		sroce_cwnd_loss(&c, i & 1);
		KUNIT_EXPECT_GE(test, c.window, SROCE_CWND_MIN);
		KUNIT_EXPECT_GE(test, c.ssthresh, SROCE_CWND_MIN);
	}
	KUNIT_EXPECT_EQ(test, c.window, SROCE_CWND_MIN);
}

static void cwnd_growth_test(struct kunit *test)
{
	static const struct {
		u32 n, window, acked;
	} steps[] = {
		{ 4, 68, 0 }, { 50, 118, 0 }, { 20, 128, 10 },
		{ 117, 128, 127 }, { 1, 129, 0 },
	};
	struct sroce_cwnd c;
	u32 acked = 0;
	unsigned int i;

	sroce_cwnd_init(&c);
	sroce_cwnd_loss(&c, false);		/* 256 */
	sroce_cwnd_loss(&c, true);		/* 64, ssthresh 128 */
	KUNIT_ASSERT_EQ(test, c.window, 64);
	KUNIT_ASSERT_EQ(test, c.ssthresh, 128);

	/*
	 * Slow start, a packet per packet, stopping at the threshold (of
	 * 20 acked, 10 reach it, 10 wait for a window's worth); then a
	 * packet per window acked.
	 */
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		sroce_cwnd_acked(&c, steps[i].n);
		KUNIT_EXPECT_EQ_MSG(test, c.window, steps[i].window,
				    "step %u", i);
		KUNIT_EXPECT_EQ_MSG(test, c.acked, steps[i].acked,
				    "step %u", i);
	}

	/* And back to the whole window, never past it. */
	while (c.window < SROCE_MAX_UNACKED_PSNS && acked < 1000000) {
		sroce_cwnd_acked(&c, 7);
		acked += 7;
	}
	KUNIT_EXPECT_EQ(test, c.window, SROCE_MAX_UNACKED_PSNS);
	KUNIT_EXPECT_LT(test, acked, 200000);
}

static struct kunit_case sroce_cwnd_cases[] = {
	KUNIT_CASE(cwnd_start_test),
	KUNIT_CASE(cwnd_loss_test),
	KUNIT_CASE(cwnd_growth_test),
	{}
};

static struct kunit_suite sroce_cwnd_suite = {
	.name = "sroce_cwnd",
	.test_cases = sroce_cwnd_cases,
};

kunit_test_suites(&sroce_cwnd_suite);
