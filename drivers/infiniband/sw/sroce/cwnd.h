/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The RC requester's congestion window: how many packets it may have in
 * flight.  Pure arithmetic, used by requester.c (loss), completer.c (ACK
 * progress) and tests/cwnd_kunit.c; the caller holds the engine lock.
 *
 * Why a software device needs one: RC recovers a loss by going back N,
 * resending every packet after the lost one.  With a fixed window of
 * SROCE_MAX_UNACKED_PSNS, 5 % loss made a requester send 13 to 20
 * packets per payload packet (the soak), and those bursts overflowed the
 * receiving kernel's per-CPU backlog (netdev_max_backlog), which lost
 * more: on Debian's 6.1 a QP could lose its retransmits seven times in a
 * row and end in RETRY_EXC_ERR.  So, much as TCP Reno does: a PSN
 * sequence NAK halves the window, a timeout quarters it, and ACK progress
 * grows it back, by one packet per packet acknowledged up to the
 * threshold (slow start), then by one packet per window.  A timeout
 * does not collapse it to the minimum as TCP's does: here it is as often
 * a lost ACK as a lost window.  A link that loses nothing never leaves
 * the full window.
 *
 * Measured (make soak settings, 64 MiB, Debian 6.1, 2 QPs): 1 358 198
 * packets sent and 92 372 per-CPU backlog drops with the fixed window;
 * 323 341 packets and 12 245 drops with this one, in about the same time.
 */
#ifndef SROCE_CWND_H
#define SROCE_CWND_H

#include <linux/minmax.h>
#include <linux/types.h>

/* Packets an RC requester may have in flight at most */
#define SROCE_MAX_UNACKED_PSNS	512
/* ... and at least, however much it loses */
#define SROCE_CWND_MIN		8

/**
 * struct sroce_cwnd - congestion window of one RC requester
 * @window: packets that may be in flight; read by restrack.c without the
 *	engine lock (READ_ONCE/WRITE_ONCE)
 * @ssthresh: below it the window grows by a packet per packet acked
 * @acked: packets acked towards the next one-packet growth above it
 */
struct sroce_cwnd {
	u32 window;
	u32 ssthresh;
	u32 acked;
};

/* A QP entering RTS starts with the whole window: no loss seen yet. */
static inline void sroce_cwnd_init(struct sroce_cwnd *c)
{
	WRITE_ONCE(c->window, SROCE_MAX_UNACKED_PSNS);
	c->ssthresh = SROCE_MAX_UNACKED_PSNS;
	c->acked = 0;
}

/*
 * A go-back-N for a loss: @timeout when no answer came at all (the
 * window, or the ACK, may be lost on the way), else a sequence NAK (the
 * peer saw a later packet: the path still carries some).
 */
static inline void sroce_cwnd_loss(struct sroce_cwnd *c, bool timeout)
{
	c->ssthresh = max_t(u32, c->window / 2, SROCE_CWND_MIN);
	WRITE_ONCE(c->window, timeout ? max_t(u32, c->window / 4,
					      SROCE_CWND_MIN) : c->ssthresh);
	c->acked = 0;
}

/* The peer acknowledged @n more packets. */
static inline void sroce_cwnd_acked(struct sroce_cwnd *c, u32 n)
{
	u32 w = c->window;

	if (w < c->ssthresh) {
		u32 grow = min(n, c->ssthresh - w);

		w += grow;
		n -= grow;
	}
	if (n && w < SROCE_MAX_UNACKED_PSNS) {
		u32 grow;

		c->acked += n;
		grow = c->acked / w;
		c->acked -= grow * w;
		w += grow;
	}
	WRITE_ONCE(c->window, min_t(u32, w, SROCE_MAX_UNACKED_PSNS));
}

#endif /* SROCE_CWND_H */
