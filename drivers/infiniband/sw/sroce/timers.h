/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The QP timers (timers.c), and the values of the RC transport timers as
 * pure functions (they are unit tested in tests/timer_kunit.c).
 *
 * The local ACK timeout of a QP is a 5-bit code n: the requester waits
 * 4.096 us * 2^n for an acknowledgment (n = 0 means forever; callers do
 * not arm the timer then).  The RNR NAK timer is a 5-bit code as well,
 * looked up in the IBTA table (enum ib_rnr_timeout); code 0 is the
 * longest, 655.36 ms.
 *
 * And the hooks of timers.c, where every timer of a QP is armed and
 * stopped.
 */
#ifndef SROCE_TIMERS_H
#define SROCE_TIMERS_H

#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/types.h>

struct sk_buff_head;
struct sroce_qp;

void sroce_timers_init(struct sroce_qp *qp);
void sroce_timers_stop(struct sroce_qp *qp);
void sroce_timers_sent(struct sroce_qp *qp);
void sroce_timers_progress(struct sroce_qp *qp);
void sroce_timers_nomem(struct sroce_qp *qp);
void sroce_timers_rnr(struct sroce_qp *qp, u8 code);
void sroce_timers_flush(struct sroce_qp *qp);
void sroce_timers_held(struct sroce_qp *qp, struct sk_buff_head *held);

/**
 * sroce_ack_timeout_ns() - the local ACK timeout in nanoseconds
 * @timeout: the QP's timeout attribute, 0-31
 *
 * Return: 4.096 us * 2^@timeout, in ns.
 */
static inline u64 sroce_ack_timeout_ns(u8 timeout)
{
	return 4096ULL << timeout;
}

/**
 * sroce_ack_timeout_jiffies() - the local ACK timeout for mod_timer()
 * @timeout: the QP's timeout attribute, 1-31
 *
 * Return: sroce_ack_timeout_ns() in jiffies, at least 1.
 */
static inline unsigned long sroce_ack_timeout_jiffies(u8 timeout)
{
	return max(nsecs_to_jiffies(sroce_ack_timeout_ns(timeout)), 1UL);
}

/**
 * sroce_rnr_timer_usecs() - the RNR NAK timer in microseconds
 * @code: the 5-bit timer field of an RNR NAK (only the low 5 bits count)
 *
 * Return: the IBTA value for @code.
 */
static inline u32 sroce_rnr_timer_usecs(u8 code)
{
	/* IBTA RNR NAK timer field, in microseconds (0 is the longest). */
	static const u32 usecs[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return usecs[code & 31];
}

/**
 * sroce_rnr_timer_jiffies() - the RNR NAK timer for mod_timer()
 * @code: the 5-bit timer field of an RNR NAK
 *
 * Return: sroce_rnr_timer_usecs() in jiffies, at least 1.
 */
static inline unsigned long sroce_rnr_timer_jiffies(u8 code)
{
	return max(usecs_to_jiffies(sroce_rnr_timer_usecs(code)), 1UL);
}

#endif /* SROCE_TIMERS_H */
