// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queue pairs: create, modify (the IBTA state machine), query, destroy,
 * and the per-QP engine that runs everything else.  The rules are at the
 * top of qp.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"
#include "cq.h"
#include "qp.h"
#include "rx.h"
#include "tx.h"
#include "srq.h"

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

static void sroce_qp_kick_home(struct sroce_qp *qp, int cpu)
{
	if (!test_bit(SROCE_QPF_DEAD, &qp->flags))
		queue_work_on(cpu, sroce_tx_wq, &qp->tx_work);
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

static void sroce_qp_set_state(struct sroce_qp *qp, enum ib_qp_state state)
{
	spin_lock_bh(&qp->state_lock);
	WRITE_ONCE(qp->state, state);
	spin_unlock_bh(&qp->state_lock);
}

/*
 * A completion error or a fatal protocol error: the QP goes to ERR and
 * everything outstanding is flushed by the engine.
 */
void sroce_qp_error(struct sroce_qp *qp)
{
	sroce_qp_set_state(qp, IB_QPS_ERR);
	set_bit(SROCE_QPF_FLUSH, &qp->flags);
	sroce_qp_kick(qp);
}

/* An asynchronous event on the QP, for its consumer's handler. */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

struct sroce_qp *sroce_qp_lookup_rcu(struct sroce_dev *sdev, u32 qpn)
{
	return xa_load(&sdev->qp_xa, qpn);
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
	sroce_count(sdev, SROCE_CNT_RX_DROP_QUEUE_FULL);
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

/* Flush a budget's worth; true if that was all. */
static bool sroce_qp_flush(struct sroce_qp *qp)
{
	bool done = sroce_sq_flush(qp);

	/* With an SRQ this only completes a WQE taken for a SEND. */
	return sroce_rq_flush(qp) && done;
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
					BIT(SROCE_QPF_REORDER) |
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

static void sroce_engine_lock(struct sroce_qp *qp)
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
static bool sroce_engine_unlock(struct sroce_qp *qp)
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
 * One pass of the engine (see qp.h), with the engine lock held.  Returns
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
	if (test_and_clear_bit(SROCE_QPF_RETRANS, &qp->flags))
		sroce_comp_timeout(qp);
	if (test_and_clear_bit(SROCE_QPF_RNR, &qp->flags))
		sroce_comp_rnr_expired(qp);
	if (test_and_clear_bit(SROCE_QPF_REORDER, &qp->flags) &&
	    qp->ibqp.qp_type == IB_QPT_RC) {
		sroce_resp_reorder_expired(qp);
		sroce_comp_reorder_expired(qp);
	}
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
	return busy || !skb_queue_empty(&qp->rx_queue) ||
	       test_bit(SROCE_QPF_TX_FULL, &qp->flags);
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

static void sroce_retrans_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, retrans_timer);

	set_bit(SROCE_QPF_RETRANS, &qp->flags);
	sroce_qp_kick(qp);
}

static void sroce_rnr_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, rnr_timer);

	set_bit(SROCE_QPF_RNR, &qp->flags);
	sroce_qp_kick(qp);
}

/* ------------------------------------------------------------ create */

static int sroce_qp_check_caps(struct sroce_dev *sdev,
			       const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SROCE_MAX_QP_WR ||
			   cap->max_recv_sge > SROCE_MAX_SGE))
		return -EINVAL;
	if (init->create_flags)
		return -EOPNOTSUPP;
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		return 0;
	case IB_QPT_GSI:
		return init->port_num == 1 ? 0 : -EINVAL;
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * The send ring: a slot is a struct rxe_send_wqe followed by the gather
 * list or the inline data, whichever is larger; librxe lays out its
 * WQEs from the caps we return, so they are rounded up here to what the
 * slot really holds.
 */
static int sroce_sq_init(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			 struct ib_ucontext *uctx)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 data = max_t(u32, cap->max_send_sge * sizeof(struct rxe_sge),
			 cap->max_inline_data);
	u32 slot = sizeof(struct rxe_send_wqe) + data;
	int err;

	qp->sq.max_sge = data / sizeof(struct rxe_sge);
	qp->sq.max_inline = data;
	err = sroce_queue_init(&qp->sq.q, uctx, max(cap->max_send_wr, 1U), slot,
			       SROCE_QUEUE_DRIVER_CONSUMES);
	if (err)
		return err;
	qp->sq.max_wr = sroce_queue_capacity(&qp->sq.q);

	qp->sq.size = roundup_pow_of_two(qp->sq.max_wr);
	qp->sq.stride = ALIGN(sizeof(struct sroce_send_wqe) +
			      max_t(u32, qp->sq.max_sge * sizeof(struct ib_sge),
				    qp->sq.max_inline), 8);
	qp->sq.wqe = kvcalloc(qp->sq.size, qp->sq.stride, SROCE_GFP_USER);
	if (!qp->sq.wqe) {
		sroce_queue_free(&qp->sq.q);
		return -ENOMEM;
	}
	spin_lock_init(&qp->sq.lock);

	cap->max_send_wr = qp->sq.max_wr;
	cap->max_send_sge = min_t(u32, qp->sq.max_sge, SROCE_MAX_SGE);
	cap->max_inline_data = qp->sq.max_inline;
	return 0;
}

static void sroce_sq_cleanup(struct sroce_qp *qp)
{
	kvfree(qp->sq.wqe);
	sroce_queue_free(&qp->sq.q);
}

static int sroce_rq_init(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			 struct ib_ucontext *uctx)
{
	struct ib_qp_cap *cap = &init->cap;
	int err;

	spin_lock_init(&qp->rq.lock);
	if (qp->srq)
		return 0;
	qp->rq.max_sge = max(cap->max_recv_sge, 1U);
	err = sroce_queue_init(&qp->rq.q, uctx, max(cap->max_recv_wr, 1U),
			       sroce_recvq_elem_size(qp->rq.max_sge),
			       SROCE_QUEUE_DRIVER_CONSUMES);
	if (err)
		return err;
	qp->rq.max_wr = sroce_queue_capacity(&qp->rq.q);
	cap->max_recv_wr = qp->rq.max_wr;
	cap->max_recv_sge = qp->rq.max_sge;
	return 0;
}

static void sroce_rq_cleanup(struct sroce_qp *qp)
{
	if (!qp->srq)
		sroce_queue_free(&qp->rq.q);
}

static int sroce_qp_alloc_qpn(struct sroce_dev *sdev, struct sroce_qp *qp)
{
	u32 qpn;
	int err;

	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		err = xa_insert_bh(&sdev->qp_xa, SROCE_GSI_QPN, qp, GFP_KERNEL);
		qpn = SROCE_GSI_QPN;
	} else {
		err = xa_alloc_cyclic_bh(&sdev->qp_xa, &qpn, qp,
					 XA_LIMIT(SROCE_MIN_QPN, SROCE_MAX_QPN),
					 &sdev->qp_next, GFP_KERNEL);
	}
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

static int sroce_qp_user_resp(struct sroce_qp *qp, struct ib_udata *udata)
{
	struct rxe_create_qp_resp resp = {};

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	sroce_queue_mminfo(&qp->sq.q, &resp.sq_mi);
	if (!qp->srq)
		sroce_queue_mminfo(&qp->rq.q, &resp.rq_mi);
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct ib_ucontext *uctx = sroce_udata_ucontext(udata);
	int err;

	/* librxe sends no driver data with create_qp. */
	err = sroce_qp_check_caps(sdev, init);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->num_qps) > SROCE_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->pd = container_of(ibqp->pd, struct sroce_pd, ibpd);
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	qp->srq = init->srq ? to_ssrq(init->srq) : NULL;
	qp->is_user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	qp->attr.port_num = 1;
	qp->attr.mtu = ib_mtu_enum_to_int(IB_MTU_256);
	qp->attr.path_mtu = IB_MTU_256;
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->engine_lock);
	INIT_WORK(&qp->work, sroce_qp_work);
	INIT_WORK(&qp->tx_work, sroce_qp_tx_work);
	qp->tx_cpu = -1;
	skb_queue_head_init(&qp->rx_queue);
	timer_setup(&qp->retrans_timer, sroce_retrans_timer_fn, 0);
	timer_setup(&qp->rnr_timer, sroce_rnr_timer_fn, 0);
	hrtimer_init(&qp->reorder_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	qp->reorder_timer.function = sroce_reorder_timer_fn;
	__skb_queue_head_init(&qp->comp.held);

	err = sroce_sq_init(qp, init, uctx);
	if (err)
		goto err_count;
	err = sroce_rq_init(qp, init, uctx);
	if (err)
		goto err_sq;
	err = sroce_resp_init(qp);
	if (err)
		goto err_rq;
	if (udata) {
		err = sroce_qp_user_resp(qp, udata);
		if (err)
			goto err_resp;
	}
	/* Last: once the QPN is in the table, packets find the QP. */
	err = sroce_qp_alloc_qpn(sdev, qp);
	if (err)
		goto err_resp;
	return 0;

err_resp:
	sroce_resp_cleanup(qp);
err_rq:
	sroce_rq_cleanup(qp);
err_sq:
	sroce_sq_cleanup(qp);
err_count:
	atomic_dec(&sdev->num_qps);
	return err;
}

/* ------------------------------------------------------------ modify */

/* Attributes whose values need checking, before anything changes. */
static int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SROCE_PKEY_TABLE_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_ALT_PATH) || (mask & IB_QP_PATH_MIG_STATE))
		return -EOPNOTSUPP;
	return 0;
}

/* Copy what the engine uses; called with the engine stopped. */
static void sroce_qp_apply_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
				int mask, const struct sroce_av *av)
{
	struct sroce_qp_attr *a = &qp->attr;

	if (mask & IB_QP_AV)
		a->av = *av;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qpn = attr->dest_qp_num & SROCE_QPN_MASK;
	if (mask & IB_QP_PATH_MTU) {
		/*
		 * No larger than what the netdev carries now: a bigger
		 * packet would be dropped on the way out, every time.
		 */
		a->path_mtu = min(attr->path_mtu,
				  sroce_ndev_ib_mtu(sroce_qp_dev(qp)->ndev));
		a->mtu = ib_mtu_enum_to_int(a->path_mtu);
	}
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->access = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		qp->src_port = rdma_get_udp_sport(a->av.flow_label,
						  qp->ibqp.qp_num, a->dest_qpn);
}

/* Entering a state resets the part of the engine it starts. */
static void sroce_qp_enter_state(struct sroce_qp *qp, enum ib_qp_state state)
{
	switch (state) {
	case IB_QPS_RESET:
		sroce_qp_rx_purge(qp);
		sroce_send_init(qp);
		sroce_resp_reset(qp);
		break;
	case IB_QPS_RTR:
		sroce_resp_reset(qp);
		qp->resp.psn = qp->attr.rq_psn;
		break;
	case IB_QPS_RTS:
		if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
			qp->req.psn = qp->attr.sq_psn;
			qp->comp.psn = qp->attr.sq_psn;
		}
		qp->comp.retry_left = qp->attr.retry_cnt;
		qp->comp.rnr_left = qp->attr.rnr_retry;
		break;
	case IB_QPS_ERR:
		set_bit(SROCE_QPF_FLUSH, &qp->flags);
		break;
	default:
		break;
	}
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, new;
	struct sroce_av av;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		return err;
	if (mask & IB_QP_AV) {
		err = sroce_av_from_attr(&av, &attr->ah_attr);
		if (err)
			return err;
	}

	sroce_engine_lock(qp);
	/* The caller's idea of the state is checked, never trusted. */
	cur = qp->state;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		err = -EINVAL;
		goto out;
	}
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	sroce_qp_apply_attr(qp, attr, mask, &av);
	if (mask & IB_QP_STATE) {
		sroce_qp_enter_state(qp, new);
		sroce_qp_set_state(qp, new);
		/* The engine reports the drain (sroce_sq_retire()). */
		if (new != IB_QPS_SQD)
			clear_bit(SROCE_QPF_SQD_NOTIFY, &qp->flags);
		else if (cur != IB_QPS_SQD &&
			 (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
			 attr->en_sqd_async_notify)
			set_bit(SROCE_QPF_SQD_NOTIFY, &qp->flags);
	}
out:
	if (sroce_engine_unlock(qp) || (!err && (mask & IB_QP_STATE)))
		sroce_qp_kick(qp);
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	const struct sroce_qp_attr *a = &qp->attr;

	memset(attr, 0, sizeof(*attr));
	sroce_engine_lock(qp);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = a->path_mtu;
	attr->qkey = a->qkey;
	attr->rq_psn = qp->resp.psn;
	attr->sq_psn = qp->req.psn;
	attr->dest_qp_num = a->dest_qpn;
	attr->qp_access_flags = a->access;
	attr->pkey_index = a->pkey_index;
	attr->port_num = a->port_num;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->sq_draining = qp->state == IB_QPS_SQD && !sroce_sq_drained(qp);
	if (ibqp->qp_type == IB_QPT_RC || ibqp->qp_type == IB_QPT_UC)
		sroce_av_to_attr(&a->av, &attr->ah_attr);
	if (sroce_engine_unlock(qp))
		sroce_qp_kick(qp);

	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.max_wr;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/* ----------------------------------------------------------- destroy */

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);

	/* No new packets: nobody can find the QP after the grace period. */
	xa_erase_bh(&sdev->qp_xa, ibqp->qp_num);
	synchronize_rcu();

	/* No new work: the engine, the timers and kicks all see DEAD. */
	sroce_engine_lock(qp);
	set_bit(SROCE_QPF_DEAD, &qp->flags);
	sroce_engine_unlock(qp);
	del_timer_sync(&qp->retrans_timer);
	del_timer_sync(&qp->rnr_timer);
	hrtimer_cancel(&qp->reorder_timer);
	/*
	 * Each work item may have queued the other before it saw DEAD;
	 * whatever runs after these three queues nothing.
	 */
	cancel_work_sync(&qp->work);
	cancel_work_sync(&qp->tx_work);
	cancel_work_sync(&qp->work);
	sroce_qp_rx_purge(qp);
	__skb_queue_purge(&qp->comp.held);

	sroce_resp_cleanup(qp);
	sroce_rq_cleanup(qp);
	sroce_sq_cleanup(qp);
	atomic_dec(&sdev->num_qps);
	return 0;
}
