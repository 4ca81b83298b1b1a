// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every timer of a QP, behind hooks named for what happened: packets
 * were sent, the peer made progress, an RNR NAK came, packets are held
 * past a gap, the QP is set up or destroyed.  The timers themselves do
 * nothing but set a bit in qp->flags and kick the engine (engine.c),
 * which acts on the bit on its next pass: what expiry means is the
 * completer's (sroce_comp_timeout(), sroce_comp_rnr_expired()) and the
 * receivers' (sroce_*_reorder_expired()).  Model: WireGuard's timers.c.
 *
 * The hooks run in the QP's engine, holding qp->engine_lock, except
 * init and stop (create and destroy).
 */
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/timer.h>

#include "sroce.h"
#include "engine.h"
#include "qp.h"
#include "timers.h"

/*
 * How long packets past a PSN gap are held (reorder.c) before the gap
 * is taken for a loss.
 */
#define SROCE_REORDER_WAIT_US	4000

/* ------------------------------------------------------------ expiry */

/* Every timer only notes what fired and has the engine act on it. */
static void sroce_timer_fired(struct sroce_qp *qp, enum sroce_qp_flag bit)
{
	set_bit(bit, &qp->flags);
	sroce_qp_kick(qp);
}

static void sroce_retrans_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, retrans_timer);

	sroce_timer_fired(qp, SROCE_QPF_RETRANS);
}

static void sroce_rnr_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, rnr_timer);

	sroce_timer_fired(qp, SROCE_QPF_RNR);
}

/*
 * The reorder timers: the engine decides whether a gap is still open.
 * Hrtimers, as the wait is shorter than a jiffy may be; one for each
 * receiving half of the QP, so that packets held by one do not extend
 * the wait of the other.
 */
static enum hrtimer_restart sroce_resp_reorder_timer_fn(struct hrtimer *t)
{
	struct sroce_qp *qp = container_of(t, struct sroce_qp,
					   resp_reorder_timer);

	sroce_timer_fired(qp, SROCE_QPF_RESP_REORDER);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart sroce_comp_reorder_timer_fn(struct hrtimer *t)
{
	struct sroce_qp *qp = container_of(t, struct sroce_qp,
					   comp_reorder_timer);

	sroce_timer_fired(qp, SROCE_QPF_COMP_REORDER);
	return HRTIMER_NORESTART;
}

/* ------------------------------------------------------------- hooks */

/*
 * Nothing is armed once the QP is dead: sroce_timers_stop() must stay
 * the last word of destroy_qp.  Every hook runs in the engine, which
 * does nothing after DEAD is set under its lock, so this only makes the
 * rule local, as WireGuard's timers do with is_dead.
 */
static bool sroce_timers_dead(const struct sroce_qp *qp)
{
	return test_bit(SROCE_QPF_DEAD, &qp->flags);
}

/**
 * sroce_timers_progress - (re)start the local ACK timer
 * @qp: the QP
 *
 * The peer made progress, or the timer fired and the requester goes
 * back: the timer restarts while requests are outstanding, and stops
 * when nothing is in flight.  Only RC waits for acknowledgments.
 */
void sroce_timers_progress(struct sroce_qp *qp)
{
	if (qp->ibqp.qp_type != IB_QPT_RC || !qp->attr.timeout)
		return;
	if (sroce_req_outstanding(qp) && !sroce_timers_dead(qp))
		mod_timer(&qp->retrans_timer,
			  jiffies + sroce_ack_timeout_jiffies(qp->attr.timeout));
	else
		del_timer(&qp->retrans_timer);
}

/**
 * sroce_timers_sent - the requester sent packets
 * @qp: the QP
 *
 * Starts the local ACK timer if it is not running; a running one keeps
 * timing the oldest packet.
 */
void sroce_timers_sent(struct sroce_qp *qp)
{
	if (!timer_pending(&qp->retrans_timer))
		sroce_timers_progress(qp);
}

/**
 * sroce_timers_nomem - no memory for a packet: come back in a tick
 * @qp: the QP
 *
 * A pending retransmit timer does that already (and its expiry with
 * nothing in flight does nothing but run the engine), and ACKs kick the
 * engine too.
 */
void sroce_timers_nomem(struct sroce_qp *qp)
{
	if (!timer_pending(&qp->retrans_timer) && !sroce_timers_dead(qp))
		mod_timer(&qp->retrans_timer, jiffies + 1);
}

/**
 * sroce_timers_rnr - the peer sent an RNR NAK: wait as long as it asked
 * @qp: the QP
 * @code: the NAK's 5-bit timer field
 *
 * The local ACK timer stops meanwhile: the requester sends nothing.
 */
void sroce_timers_rnr(struct sroce_qp *qp, u8 code)
{
	del_timer(&qp->retrans_timer);
	if (!sroce_timers_dead(qp))
		mod_timer(&qp->rnr_timer,
			  jiffies + sroce_rnr_timer_jiffies(code));
}

/**
 * sroce_timers_flush - the requester has nothing outstanding any more
 * @qp: the QP, being flushed or reset
 */
void sroce_timers_flush(struct sroce_qp *qp)
{
	del_timer(&qp->retrans_timer);
	del_timer(&qp->rnr_timer);
}

/**
 * sroce_timers_held - (re)start the wait for the gap before held packets
 * @qp: the QP
 * @held: the responder's or the completer's held packets
 *
 * Each list has its own timer: with one for both, packets held by the
 * completer restarted the wait of requests the responder held, and the
 * other way round, so a gap could be waited on for longer than
 * SROCE_REORDER_WAIT_US.
 */
void sroce_timers_held(struct sroce_qp *qp, struct sk_buff_head *held)
{
	if (sroce_timers_dead(qp))
		return;
	hrtimer_start(held == &qp->resp.held ? &qp->resp_reorder_timer :
		      &qp->comp_reorder_timer,
		      ns_to_ktime(SROCE_REORDER_WAIT_US * NSEC_PER_USEC),
		      HRTIMER_MODE_REL);
}

/**
 * sroce_timers_init - set up the timers of a new QP
 * @qp: the QP
 */
void sroce_timers_init(struct sroce_qp *qp)
{
	timer_setup(&qp->retrans_timer, sroce_retrans_timer_fn, 0);
	timer_setup(&qp->rnr_timer, sroce_rnr_timer_fn, 0);
	hrtimer_init(&qp->resp_reorder_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL);
	qp->resp_reorder_timer.function = sroce_resp_reorder_timer_fn;
	hrtimer_init(&qp->comp_reorder_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_REL);
	qp->comp_reorder_timer.function = sroce_comp_reorder_timer_fn;
}

/**
 * sroce_timers_stop - stop every timer of a QP and forget their expiry
 * @qp: the QP: dead (destroy_qp), or entering RESET (modify_qp)
 *
 * Waits for a callback running on another CPU, then clears the flag
 * bits the timers set, so that a timer that fired before RESET does not
 * act on the QP after it.  Waiting with the engine lock held (RESET) is
 * safe: the callbacks take no lock but the workqueue's.
 *
 * Context: process context; the engine lock held or not.
 */
void sroce_timers_stop(struct sroce_qp *qp)
{
	del_timer_sync(&qp->retrans_timer);
	del_timer_sync(&qp->rnr_timer);
	hrtimer_cancel(&qp->resp_reorder_timer);
	hrtimer_cancel(&qp->comp_reorder_timer);
	clear_bit(SROCE_QPF_RETRANS, &qp->flags);
	clear_bit(SROCE_QPF_RNR, &qp->flags);
	clear_bit(SROCE_QPF_RESP_REORDER, &qp->flags);
	clear_bit(SROCE_QPF_COMP_REORDER, &qp->flags);
}
