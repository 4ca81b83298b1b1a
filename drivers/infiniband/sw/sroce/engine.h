/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The per-QP engine (engine.c).
 *
 * Everything a QP does on the wire runs in its engine, one instance at a
 * time, holding qp->engine_lock (a BH spinlock: nothing in the engine
 * sleeps): receiving (responder and completer), sending (requester, read
 * responses, ACKs), timers' effects and flushing.  The engine state (req,
 * comp, resp) is only touched there, so it needs no other locking.
 *
 * Where it runs: mostly in the QP's work item (qp->work) on the unbound
 * sroce workqueue, so different QPs run in parallel on different CPUs.
 * Two shortcuts save the trip through the workqueue, which costs a
 * wakeup and most of the latency of a small message: the user doorbell
 * runs a pass or two in the system call (sroce_qp_run()), and a small
 * packet is taken in by whoever delivers it -- softirq, or on loopback
 * the sender's engine -- if the engine is free (sroce_qp_rx_deliver()).
 * The inline receive only tries the lock, and when it is taken leaves
 * the packet queued for the holder; the doorbell waits for it (a pass is
 * bounded by its budget, and handing the pass to a holder off the QP's
 * home CPU measured slower: Documentation/performance.rst).
 * Timers only set a flag bit and queue the work.  While an RC QP has
 * packets in flight its sending stays on one CPU, its home, where
 * qp->tx_work runs the engine (engine.c, "A QP's home CPU"), so that a
 * veth's per-CPU backlogs do not reorder its packets.
 *
 * The execution contract.  What runs in the engine holds a BH spinlock,
 * often in softirq or a work item that other QPs wait behind, and takes
 * input from a user (rings) and from the network (packets).  So:
 *
 * 1. Every loop over an index a user writes is bounded by the ring's
 *    capacity, never by the index: sroce_sq_fetch() stops at the room in
 *    qp->sq.wqe and at its budget, sroce_req_reset() after the ring's
 *    capacity, the flushes at their budget and, over all their passes,
 *    at a ring's worth for each request to flush (sroce_qp_flush():
 *    otherwise a user refilling the ring keeps the work item busy for
 *    good).  queue.h reads the indices.
 *
 * 2. Every queue a remote peer can fill is capped, and what does not
 *    fit is counted: the QP's receive queue (SROCE_RX_QUEUE_MAX, and
 *    SROCE_DEV_RX_QUEUE_MAX for the device; rx_drop_queue_full), the
 *    packets held past a gap (SROCE_REORDER_HOLD in reorder.c; past it
 *    the gap is a loss: out_of_sequence, and what was held is counted
 *    in rx_reorder_dropped), the responder resources
 *    (max_dest_rd_atomic; rd_atomic_exceeded and a NAK), the device's
 *    ODP fault queue (SROCE_ODP_FAULT_MAX, odp.h; odp_fault_drops).
 *
 *    Nothing here faults a page in: an ODP MR's missing page makes the
 *    access back off (odp.h) while a work item faults it.
 *
 * 3. Every loop that runs in softirq or under the engine lock has a
 *    budget: a pass receives SROCE_BUDGET packets and sends SROCE_BUDGET
 *    READ responses and SROCE_BUDGET requests; a flush posts
 *    SROCE_FLUSH_BUDGET completions per queue; retiring done send WQEs
 *    posts SROCE_RETIRE_BUDGET (completer.c); a NAK sends at most
 *    SROCE_CATCH_UP_BUDGET responses ahead of itself (resp_answer.c);
 *    the work item runs SROCE_WORK_PASSES passes and the doorbell
 *    SROCE_DOORBELL_PASSES before they yield; a packet taken in inline
 *    sends at most SROCE_INLINE_RESP_PKTS responses.  Loops bounded by
 *    a fixed size (the responder resources, the held packets) need none,
 *    nor the walks over the SQ's WQEs that only mark or look
 *    (sroce_comp_ack_upto(), sroce_req_rewind()): at most the SQ's
 *    size, a few instructions each, no completion, no callback.
 *
 * 4. Fields read outside the engine, without its lock, and how:
 *    - qp->state: sroce_qp_state() (READ_ONCE); written under the engine
 *      lock with WRITE_ONCE;
 *    - qp->flags: atomic bit operations only;
 *    - qp->rx_queue: its own lock; skb_queue_empty_lockless() and
 *      skb_queue_len_lockless() outside it.  What it holds has been
 *      scrubbed (rx.c: no route, no conntrack reference), since it may
 *      wait past the softirq that received it;
 *    - qp->engine_busy, qp->tx_cpu, qp->rx_streak, qp->resp.streaming:
 *      READ_ONCE and WRITE_ONCE;
 *    - qp->tx_full_tries: read by the work item (READ_ONCE) after the
 *      engine lock is dropped; written in tx.c with WRITE_ONCE;
 *    - qp->req.psn, qp->comp.psn, qp->resp.res_send (the home CPU,
 *      sroce_qp_in_flight()) and qp->req.next, qp->req.tail,
 *      qp->sq.head (whether to take a packet in inline): READ_ONCE on
 *      the reader's side, WRITE_ONCE in the requester, completer and
 *      responder (the memset of a RESET aside: the QP is not receiving
 *      then, and a stale value only picks a CPU or a path);
 *    - qp->flush_asked: atomic_t, sroce_qp_ask_flush();
 *    - for display only, by rdma res (restrack.c, -dd and raw): the
 *      PSNs, indices, SSN, retry counts, congestion window and flags of
 *      req, comp and resp, qp->attr, qp->flags and the queues' lengths,
 *      each with READ_ONCE (skb_queue_len_lockless()), never what they
 *      point to.  The values may be stale and from different moments;
 *      nothing is decided on them.
 *
 * 5. Consumer callbacks run under the engine lock with BHs off, on any
 *    CPU, in softirq or process context: the CQ's comp_handler and
 *    event_handler (sroce_cq_post(): completions, CQ overflow), the
 *    QP's event_handler (IB_EVENT_SQ_DRAINED) and the SRQ's
 *    (IB_EVENT_SRQ_LIMIT_REACHED).  They may post work requests, poll
 *    and arm CQs (those take only their queue's irqsave lock and kick
 *    the engine), but may not sleep, and may not call a verb that takes
 *    the engine lock of a QP (modify_qp, query_qp, destroy_qp): on the
 *    QP whose engine called them that deadlocks.
 */
#ifndef SROCE_ENGINE_H
#define SROCE_ENGINE_H

#include <linux/types.h>

struct sk_buff;
struct sroce_qp;

int sroce_qp_wq_init(void);
void sroce_qp_wq_exit(void);
void sroce_engine_init(struct sroce_qp *qp);
void sroce_engine_reset(struct sroce_qp *qp);
void sroce_engine_stop(struct sroce_qp *qp);
void sroce_engine_lock(struct sroce_qp *qp) __acquires(&qp->engine_lock);
bool sroce_engine_unlock(struct sroce_qp *qp) __releases(&qp->engine_lock);
void sroce_qp_kick(struct sroce_qp *qp);
void sroce_qp_run(struct sroce_qp *qp);
void sroce_qp_rx_deliver(struct sroce_qp *qp, struct sk_buff *skb);

#endif /* SROCE_ENGINE_H */
