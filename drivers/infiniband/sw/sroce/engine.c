// SPDX-License-Identifier: GPL-2.0-only
/*
 * The per-QP engine: where it runs (the work items, the doorbell, inline
 * in softirq or a loopback sender), its lock and nesting, the queue of
 * received packets, and one pass over everything a QP does on the wire.
 * The rules are at the top of engine.h.
 */
#include <linux/skbuff.h>
#include <linux/workqueue.h>

#include "sroce.h"
#include "completer.h"
#include "engine.h"
#include "qp.h"
#include "requester.h"
#include "resp_answer.h"
#include "responder.h"
#include "rx.h"
#include "timers.h"
#include "tx.h"

/* Packets one pass of the engine handles per direction before yielding */
#define SROCE_BUDGET		64
/* Completions one pass of a flush posts (the SQ's and the RQ's each) */
#define SROCE_FLUSH_BUDGET	256
/* Passes the work item runs before it yields the CPU, and the doorbell */
#define SROCE_WORK_PASSES	4
#define SROCE_DOORBELL_PASSES	2

/*
 * Received packets a QP's queue holds for its engine, and all the QPs of
 * a device together: a peer (or anyone, before the engine has checked
 * the packets) can fill them faster than the engine empties them.  The
 * QP's cap is twice the window a requester may have in flight.
 */
#define SROCE_RX_QUEUE_MAX	(2 * SROCE_MAX_UNACKED_PSNS)
#define SROCE_DEV_RX_QUEUE_MAX	16384
/* Received packets up to this size (UDP header on) may be taken inline */
#define SROCE_INLINE_RX_MAX	512
/*
 * A QP that received fewer messages than this since it last sent one is
 * answering them one by one: the packet that ends the next is taken inline.
 */
#define SROCE_PINGPONG_STREAK	2
/* READ or atomic response packets a packet taken in inline may send */
#define SROCE_INLINE_RESP_PKTS	1

static struct workqueue_struct *sroce_wq;
static struct workqueue_struct *sroce_tx_wq;

/*
 * The engines running on this CPU, innermost last.  They nest on
 * loopback, where the sender's engine hands a packet to the receiver's,
 * which may answer.  Only the first level of that nesting runs inline
 * (see sroce_qp_rx_deliver()), which bounds the stack; the engine lock
 * keeps BHs, and so preemption, off while an engine is on this list.
 */
#define SROCE_ENGINE_NEST	2

struct sroce_engine_cpu {
	unsigned int depth;
	struct sroce_qp *held[SROCE_ENGINE_NEST];
};

static DEFINE_PER_CPU(struct sroce_engine_cpu, sroce_engine_cpu);

int sroce_qp_wq_init(void)
{
	/*
	 * Unbound so that QPs spread over the CPUs; MEM_RECLAIM because
	 * NVMe-oF and NFS over RDMA write back pages through us.
	 */
	sroce_wq = alloc_workqueue("sroce", WQ_UNBOUND | WQ_MEM_RECLAIM |
				   WQ_HIGHPRI, 0);
	if (!sroce_wq)
		return -ENOMEM;
	/* Per CPU: a QP's sending stays on its home CPU (see below). */
	sroce_tx_wq = alloc_workqueue("sroce_tx", WQ_MEM_RECLAIM | WQ_HIGHPRI,
				      0);
	if (!sroce_tx_wq) {
		destroy_workqueue(sroce_wq);
		return -ENOMEM;
	}
	return 0;
}

void sroce_qp_wq_exit(void)
{
	destroy_workqueue(sroce_tx_wq);
	destroy_workqueue(sroce_wq);
}

/*
 * A QP's home CPU.  A veth (and lo, and RPS-less receive generally) hands
 * a packet to the backlog of the CPU that sends it, and each CPU's backlog
 * is emptied on its own schedule: on 6.1, once ksoftirqd takes over, one
 * can wait milliseconds while the other is emptied at once.  So packets
 * of one QP sent from two CPUs overtake each other, and an RC peer takes
 * the gap for a loss.  While an RC QP has packets in flight (requests not
 * yet acknowledged, or READ responses being sent) it sends only from the
 * CPU it sent them from, its home; the work done elsewhere hands the
 * sending to tx_work on that CPU.  Receiving still runs wherever it is
 * queued, so placing a payload stays in parallel with producing it.
 * Loopback to our own GID skips the backlogs and has no home.
 */
static bool sroce_qp_in_flight(const struct sroce_qp *qp)
{
	return READ_ONCE(qp->comp.psn) != READ_ONCE(qp->req.psn) ||
	       (READ_ONCE(qp->resp.res_send) >= 0 &&
		READ_ONCE(qp->resp.streaming));
}

/*
 * After the responder sent @sent READ or atomic response packets: are
 * responses streaming, some out and more to follow?  A READ that finds
 * the responder idle is not: its first response may leave from where the
 * request came in (sroce_qp_rx_inline()), which a small READ's latency
 * needs; a READ behind others keeps their home.
 */
static void sroce_qp_note_responses(struct sroce_qp *qp, int sent)
{
	WRITE_ONCE(qp->resp.streaming, qp->resp.res_send >= 0 &&
		   (sent > 0 || qp->resp.streaming));
}

static int sroce_qp_tx_home(const struct sroce_qp *qp)
{
	int cpu = READ_ONCE(qp->tx_cpu);

	if (cpu < 0 || !cpu_online(cpu) || !sroce_qp_in_flight(qp))
		return -1;
	return cpu;
}

/*
 * May the engine send the QP's requests and responses from this CPU?  If
 * so, this CPU becomes the QP's home.  @home_work: the caller is the
 * home's work item (tx_work), which sends wherever it runs: it runs away
 * from the home when the workqueue kept it on the CPU where it was still
 * running (queue_work_on() does that, for non-reentrancy), and if it only
 * kicked the home again it would be kept there again, for ever, and the
 * QP would never send.  Context: the engine.
 */
static bool sroce_qp_tx_claim(struct sroce_qp *qp, bool home_work)
{
	int home = sroce_qp_tx_home(qp), cpu = smp_processor_id();

	if (home >= 0 && home != cpu && !home_work)
		return false;
	if (qp->ibqp.qp_type == IB_QPT_RC &&
	    !sroce_av_is_loopback(&qp->attr.av))
		WRITE_ONCE(qp->tx_cpu, cpu);
	return true;
}

/* Counted when queued: each is a wake-up of the home's worker. */
static void sroce_qp_kick_home(struct sroce_qp *qp, int cpu)
{
	if (!test_bit(SROCE_QPF_DEAD, &qp->flags) &&
	    queue_work_on(cpu, sroce_tx_wq, &qp->tx_work))
		sroce_count(sroce_qp_dev(qp), SROCE_CNT_TX_HOME_KICKS);
}

/*
 * Have the engine run (again) soon: received packets on any CPU, sending
 * on the QP's home if it has one.
 */
void sroce_qp_kick(struct sroce_qp *qp)
{
	int home;

	if (test_bit(SROCE_QPF_DEAD, &qp->flags))
		return;
	home = sroce_qp_tx_home(qp);
	if (home >= 0 && skb_queue_empty_lockless(&qp->rx_queue))
		sroce_qp_kick_home(qp, home);
	else
		queue_work(sroce_wq, &qp->work);
}

/*
 * Queue a received packet for the engine, within the QP's and the
 * device's caps; false if it was dropped (and freed).
 */
static bool sroce_qp_rx_enqueue(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_dev *sdev = sroce_qp_dev(qp);

	if (skb_queue_len_lockless(&qp->rx_queue) >= SROCE_RX_QUEUE_MAX)
		goto full;
	if (atomic_inc_return(&sdev->rx_queued) > SROCE_DEV_RX_QUEUE_MAX) {
		atomic_dec(&sdev->rx_queued);
		goto full;
	}
	skb_queue_tail(&qp->rx_queue, skb);
	return true;

full:
	sroce_drop(sdev, qp->ibqp.qp_num, SROCE_CNT_RX_DROP_QUEUE_FULL);
	kfree_skb(skb);
	return false;
}

static struct sk_buff *sroce_qp_rx_dequeue(struct sroce_qp *qp)
{
	struct sk_buff *skb = skb_dequeue(&qp->rx_queue);

	if (skb)
		atomic_dec(&sroce_qp_dev(qp)->rx_queued);
	return skb;
}

static void sroce_qp_rx_purge(struct sroce_qp *qp)
{
	struct sk_buff *skb;

	while ((skb = sroce_qp_rx_dequeue(qp)))
		kfree_skb(skb);
}

/* Hand one received packet to the responder or completer; frees it. */
static void sroce_qp_receive_one(struct sroce_qp *qp, struct sk_buff *skb)
{
	if (sroce_qp_can_receive(qp))
		sroce_rx_process(qp, skb);
	kfree_skb(skb);
}

/* One batch of received packets; returns how many were handled. */
static int sroce_qp_receive(struct sroce_qp *qp)
{
	struct sk_buff *skb;
	int n = 0;

	while (n < SROCE_BUDGET && (skb = sroce_qp_rx_dequeue(qp))) {
		sroce_qp_receive_one(qp, skb);
		n++;
	}
	if (qp->ibqp.qp_type == IB_QPT_RC)
		sroce_resp_send_ack(qp);
	return n;
}

/*
 * Flush a budget's worth.  Returns true when that was all, or when the
 * rings have given up all that was granted: a user may refill a ring in
 * ERR as fast as we empty it (one store of an index makes a ring of
 * WQEs), and the work item runs at high priority, so flushing for as long
 * as the user keeps the ring full would let one cheap store buy a CPU at
 * nice -20.  Each doorbell, post or state change asks again
 * (sroce_qp_ask_flush()) and grants a ring's worth more: a user pays a
 * system call a ring.
 */
static bool sroce_qp_flush(struct sroce_qp *qp)
{
	int asked = atomic_read(&qp->flush_asked);
	bool done;

	if (asked != qp->flush_seen) {
		qp->flush_seen = asked;
		qp->flush_left = sroce_queue_capacity(&qp->sq.q);
		if (!qp->srq && qp->rq.q.buf)
			qp->flush_left += sroce_queue_capacity(&qp->rq.q);
	}
	done = sroce_sq_flush(qp, SROCE_FLUSH_BUDGET, &qp->flush_left);
	/* With an SRQ this only completes a WQE taken for a SEND. */
	done = sroce_rq_flush(qp, SROCE_FLUSH_BUDGET, &qp->flush_left) && done;
	return done || !qp->flush_left;
}

/*
 * Something the work item should do: packets queued, a timer's effect,
 * READ responses to send, or WQEs the requester has not finished or could
 * not fetch.  New WQEs in the ring need not count: their doorbell runs
 * the engine.
 */
static bool sroce_qp_has_work(const struct sroce_qp *qp)
{
	return !skb_queue_empty_lockless(&qp->rx_queue) ||
	       (READ_ONCE(qp->flags) & (BIT(SROCE_QPF_RETRANS) |
					BIT(SROCE_QPF_RNR) |
					BIT(SROCE_QPF_FLUSH) |
					BIT(SROCE_QPF_RESP_REORDER) |
					BIT(SROCE_QPF_COMP_REORDER) |
					BIT(SROCE_QPF_RETIRE) |
					BIT(SROCE_QPF_TX_FULL))) ||
	       (qp->ibqp.qp_type == IB_QPT_RC && qp->resp.res_send >= 0) ||
	       qp->req.next != qp->sq.head || qp->sq.fetch_blocked;
}

/* The engine lock is held by whoever runs the engine, in any context. */
static void sroce_engine_enter(struct sroce_qp *qp)
{
	struct sroce_engine_cpu *ec = this_cpu_ptr(&sroce_engine_cpu);

	if (ec->depth < SROCE_ENGINE_NEST)
		ec->held[ec->depth] = qp;
	ec->depth++;
	WRITE_ONCE(qp->engine_busy, true);
}

void sroce_engine_lock(struct sroce_qp *qp)
	__acquires(&qp->engine_lock)
{
	spin_lock_bh(&qp->engine_lock);
	sroce_engine_enter(qp);
}

/*
 * Release the engine.  Returns true if packets were queued for it while
 * it was held: a packet that finds the engine busy is left to the holder
 * (see sroce_qp_rx_deliver()), who then runs another pass or kicks the
 * work item.
 */
bool sroce_engine_unlock(struct sroce_qp *qp)
	__releases(&qp->engine_lock)
{
	struct sroce_engine_cpu *ec = this_cpu_ptr(&sroce_engine_cpu);

	ec->depth--;
	if (ec->depth < SROCE_ENGINE_NEST)
		ec->held[ec->depth] = NULL;
	WRITE_ONCE(qp->engine_busy, false);
	spin_unlock_bh(&qp->engine_lock);
	/* Pairs with the barrier in sroce_qp_rx_deliver(). */
	smp_mb();
	return !skb_queue_empty_lockless(&qp->rx_queue);
}

/* Is @qp's engine running further up this CPU's stack?  BHs are off. */
static bool sroce_engine_held_here(const struct sroce_qp *qp)
{
	struct sroce_engine_cpu *ec = this_cpu_ptr(&sroce_engine_cpu);
	unsigned int i;

	for (i = 0; i < min_t(unsigned int, ec->depth, SROCE_ENGINE_NEST); i++)
		if (ec->held[i] == qp)
			return true;
	return false;
}

/*
 * One pass of the engine (see engine.h), with the engine lock held.  Returns
 * true if there is more to do: packets arrived meanwhile, a budget ran
 * out, or the local queue was full (the work item pauses, then sends).
 * Work that waits for the peer (a full window, a READ limit, an RNR wait)
 * is not "more": the ACK or timer that ends the wait kicks it.
 * @home_work: see sroce_qp_tx_claim().
 */
static bool sroce_qp_pass(struct sroce_qp *qp, bool home_work)
{
	bool busy;
	int sent;

	if (test_bit(SROCE_QPF_DEAD, &qp->flags))
		return false;
	busy = sroce_qp_receive(qp) >= SROCE_BUDGET;
	/*
	 * A timeout with packets from the peer still queued is this host's
	 * slowness, not the peer's silence: they may be the ACKs it waits
	 * for.  Take them in first; the flag stays for the next pass.
	 */
	if (!busy && test_and_clear_bit(SROCE_QPF_RETRANS, &qp->flags))
		sroce_comp_timeout(qp);
	if (test_and_clear_bit(SROCE_QPF_RNR, &qp->flags))
		sroce_comp_rnr_expired(qp);
	if (test_and_clear_bit(SROCE_QPF_RESP_REORDER, &qp->flags) &&
	    qp->ibqp.qp_type == IB_QPT_RC)
		sroce_resp_reorder_expired(qp);
	if (test_and_clear_bit(SROCE_QPF_COMP_REORDER, &qp->flags) &&
	    qp->ibqp.qp_type == IB_QPT_RC)
		sroce_comp_reorder_expired(qp);
	if (test_and_clear_bit(SROCE_QPF_RETIRE, &qp->flags))
		sroce_sq_retire(qp);
	if (!sroce_qp_tx_claim(qp, home_work)) {
		sroce_qp_kick_home(qp, READ_ONCE(qp->tx_cpu));
	} else {
		if (qp->ibqp.qp_type == IB_QPT_RC) {
			sent = sroce_resp_send_reads(qp, SROCE_BUDGET);
			sroce_qp_note_responses(qp, sent);
			if (sent >= SROCE_BUDGET)
				busy = true;
		}
		if (sroce_req_send(qp, SROCE_BUDGET) >= SROCE_BUDGET ||
		    qp->sq.fetch_more)
			busy = true;
	}
	if (sroce_qp_state(qp) == IB_QPS_ERR &&
	    test_and_clear_bit(SROCE_QPF_FLUSH, &qp->flags) &&
	    !sroce_qp_flush(qp)) {
		set_bit(SROCE_QPF_FLUSH, &qp->flags);
		busy = true;
	}
	/* rx_queue fills from softirq, and from a peer QP's loopback tx. */
	return busy || !skb_queue_empty_lockless(&qp->rx_queue) ||
	       test_bit(SROCE_QPF_TX_FULL, &qp->flags) ||
	       test_bit(SROCE_QPF_RETIRE, &qp->flags);
}

/*
 * Up to @passes passes, taking the lock for each so that modify_qp and
 * the other CPUs get a look in.  Returns true if there is more to do.
 */
static bool sroce_qp_run_passes(struct sroce_qp *qp, int passes,
				bool home_work)
{
	bool more = true;

	while (more && passes-- && !test_bit(SROCE_QPF_TX_FULL, &qp->flags)) {
		sroce_engine_lock(qp);
		more = sroce_qp_pass(qp, home_work);
		more |= sroce_engine_unlock(qp);
		if (more && passes)
			cond_resched();
	}
	return more;
}

/*
 * The engine's work item, on sroce_wq.  When the local netdev's queue was
 * full, it sleeps a moment before sending again: that frees the CPU for
 * whatever empties the queue (on 6.1, a veth peer's backlog is emptied by
 * ksoftirqd once busy, a thread like this one), where sending on would
 * only lose packets.  Received packets wait meanwhile.
 */
static void sroce_qp_work_run(struct sroce_qp *qp, bool home_work)
{
	bool more = sroce_qp_run_passes(qp, SROCE_WORK_PASSES, home_work);

	if (test_bit(SROCE_QPF_TX_FULL, &qp->flags)) {
		/* Longer each time the queue is still full (sroce_tx()). */
		unsigned long us = SROCE_TX_FULL_PAUSE_US *
				   max_t(u8, READ_ONCE(qp->tx_full_tries), 1);

		usleep_range(us, 2 * us);
		clear_bit(SROCE_QPF_TX_FULL, &qp->flags);
		more = true;
	}
	/* Still more: go round again, letting other work run first. */
	if (more)
		sroce_qp_kick(qp);
}

static void sroce_qp_work(struct work_struct *work)
{
	sroce_qp_work_run(container_of(work, struct sroce_qp, work), false);
}

/* The same on the QP's home CPU, where its sending runs meanwhile. */
static void sroce_qp_tx_work(struct work_struct *work)
{
	sroce_qp_work_run(container_of(work, struct sroce_qp, tx_work), true);
}

/**
 * sroce_qp_run - run the engine now, in the caller's context
 * @qp: the QP
 *
 * For the user doorbell: the first packets leave from the system call,
 * saving a trip through the workqueue, and on loopback the answers to
 * them (ACKs, READ responses) are taken in on the way; whatever is left
 * goes to the work item.  If the engine is busy, this waits for it: the
 * holder never waits for anything while it holds it, and what it does
 * is bounded by its budget; waking the worker instead would cost a small
 * message most of its latency.
 * Context: process context, no locks held.
 */
void sroce_qp_run(struct sroce_qp *qp)
{
	if (sroce_qp_run_passes(qp, SROCE_DOORBELL_PASSES, false))
		sroce_qp_kick(qp);
}

/*
 * Small packets (ACKs, READ requests, small messages) are worth taking in
 * at once, where they arrive: that saves waking a worker, which is most
 * of the latency of a small message.  So is the packet that ends a
 * message someone is waiting for: one the QP will answer (it has been
 * answering each message it got), or the response to the only request
 * it has out.  The packets of a stream go to the QP's work item, so that
 * checking and placing their payload runs in parallel with whatever
 * produced them (the sender's engine, on loopback).
 */
static bool sroce_qp_rx_inline_ok(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_opcode_info *info;

	if (__this_cpu_read(sroce_engine_cpu.depth) > 1 ||
	    !skb_queue_empty_lockless(&qp->rx_queue))
		return false;
	if (skb->len <= SROCE_INLINE_RX_MAX)
		return true;
	info = sroce_opcode(sroce_skb_bth(skb)->opcode);
	if (!info || !(info->flags & SROCE_F_LAST))
		return false;
	if (info->flags & SROCE_F_REQ)
		return READ_ONCE(qp->rx_streak) < SROCE_PINGPONG_STREAK;
	return READ_ONCE(qp->req.next) - READ_ONCE(qp->req.tail) <= 1 &&
	       READ_ONCE(qp->sq.head) == READ_ONCE(qp->req.next);
}

/*
 * Take one packet in now, or return false if the engine is busy.  The
 * receive part of the engine runs, and the first packet of a READ or
 * atomic response if the packet asked for one, so that a small READ is
 * answered without a wake-up; the rest (longer responses, sends the ACK
 * allows) goes to the work item.
 */
static bool sroce_qp_rx_inline(struct sroce_qp *qp, struct sk_buff *skb)
{
	bool more;
	int sent;

	if (!spin_trylock_bh(&qp->engine_lock))
		return false;
	sroce_engine_enter(qp);
	if (test_bit(SROCE_QPF_DEAD, &qp->flags)) {
		sroce_engine_unlock(qp);
		kfree_skb(skb);
		return true;
	}
	sroce_qp_receive_one(qp, skb);
	if (qp->ibqp.qp_type == IB_QPT_RC) {
		if (sroce_qp_tx_claim(qp, false)) {
			sent = sroce_resp_send_reads(qp, SROCE_INLINE_RESP_PKTS);
			sroce_qp_note_responses(qp, sent);
		}
		sroce_resp_send_ack(qp);
	}
	more = sroce_qp_has_work(qp);
	more |= sroce_engine_unlock(qp);
	if (more)
		sroce_qp_kick(qp);
	return true;
}

/**
 * sroce_qp_rx_deliver - a packet for @qp arrived
 * @qp: the QP, found under rcu_read_lock()
 * @skb: the packet; consumed
 *
 * Context: softirq, or an engine sending on loopback; RCU read side.
 */
void sroce_qp_rx_deliver(struct sroce_qp *qp, struct sk_buff *skb)
{
	bool done, held, kick = false;

	local_bh_disable();
	held = sroce_engine_held_here(qp);
	done = !held && sroce_qp_rx_inline_ok(qp, skb) &&
	       sroce_qp_rx_inline(qp, skb);
	if (!done && sroce_qp_rx_enqueue(qp, skb)) {
		/*
		 * Either the engine's holder sees the packet once it lets
		 * go (the barrier in sroce_engine_unlock()), or we see the
		 * engine free and kick it.  An engine up this CPU's stack
		 * (the ACK to a loopback send) finds it when its pass ends.
		 */
		smp_mb();
		kick = !held && !READ_ONCE(qp->engine_busy);
	}
	local_bh_enable();
	if (kick)
		sroce_qp_kick(qp);
}

/**
 * sroce_engine_init - set up the engine of a new QP
 * @qp: the QP, not yet in the device's table
 */
void sroce_engine_init(struct sroce_qp *qp)
{
	spin_lock_init(&qp->engine_lock);
	INIT_WORK(&qp->work, sroce_qp_work);
	INIT_WORK(&qp->tx_work, sroce_qp_tx_work);
	qp->tx_cpu = -1;
	skb_queue_head_init(&qp->rx_queue);
	sroce_timers_init(qp);
}

/**
 * sroce_engine_reset - forget the engine's state, for a QP entering RESET
 * @qp: the QP, its engine lock held by modify_qp
 *
 * Drops the packets queued, stops the timers and forgets what they fired,
 * and forgets the QP's home CPU: a QP taken through RESET starts over.
 */
void sroce_engine_reset(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->engine_lock);
	sroce_qp_rx_purge(qp);
	sroce_timers_stop(qp);
	WRITE_ONCE(qp->tx_cpu, -1);
}

/**
 * sroce_engine_stop - stop the engine of a QP for good
 * @qp: the QP, out of the device's table for an RCU grace period: no
 *	receive path can still be queueing to it
 *
 * Once this returns nothing runs the engine, no timer or work item is
 * pending, and the queue of received packets is empty.
 *
 * Context: process context (destroy_qp).
 */
void sroce_engine_stop(struct sroce_qp *qp)
{
	/* No new work: the engine, the timers and kicks all see DEAD. */
	sroce_engine_lock(qp);
	set_bit(SROCE_QPF_DEAD, &qp->flags);
	sroce_engine_unlock(qp);
	sroce_timers_stop(qp);
	/*
	 * Each work item may have queued the other before it saw DEAD;
	 * whatever runs after these three queues nothing.
	 */
	cancel_work_sync(&qp->work);
	cancel_work_sync(&qp->tx_work);
	cancel_work_sync(&qp->work);
	sroce_qp_rx_purge(qp);
}
