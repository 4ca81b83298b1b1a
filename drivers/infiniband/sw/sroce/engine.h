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
 * Both only try the lock; when it is taken they queue the work instead.
 * Timers only set a flag bit and queue the work.  While an RC QP has
 * packets in flight its sending stays on one CPU, its home, where
 * qp->tx_work runs the engine (engine.c, "A QP's home CPU"), so that a
 * veth's per-CPU backlogs do not reorder its packets.
 */
#ifndef SROCE_ENGINE_H
#define SROCE_ENGINE_H

#include <linux/types.h>

struct sk_buff;
struct sroce_qp;

int sroce_qp_wq_init(void);
void sroce_qp_wq_exit(void);
void sroce_engine_init(struct sroce_qp *qp);
void sroce_engine_stop(struct sroce_qp *qp);
void sroce_engine_lock(struct sroce_qp *qp) __acquires(&qp->engine_lock);
bool sroce_engine_unlock(struct sroce_qp *qp) __releases(&qp->engine_lock);
void sroce_qp_kick(struct sroce_qp *qp);
void sroce_qp_run(struct sroce_qp *qp);
void sroce_qp_rx_deliver(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_qp_rx_purge(struct sroce_qp *qp);

#endif /* SROCE_ENGINE_H */
