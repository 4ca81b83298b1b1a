/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Queue pairs: the structures every part of the data path shares, and
 * the QP verbs (qp.c).  What runs on a QP, and under which rules, is in
 * engine.h.
 *
 * Lifetime: the receive path finds QPs under RCU (xa_load on the device's
 * QP table) and only queues to them inside the RCU read section; destroy
 * erases the QP from the table, waits for a grace period, marks it dead,
 * stops the timers and the work, and purges the queue.  Nothing else holds
 * a pointer to a QP, so after that it can go.
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/hrtimer.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "av.h"
#include "completer.h"
#include "queue.h"
#include "requester.h"
#include "responder.h"

struct sroce_cq;
struct sroce_srq;
struct sroce_pd;

/* qp->flags bits, set from any context */
enum sroce_qp_flag {
	SROCE_QPF_DEAD,		/* being destroyed: do nothing more */
	SROCE_QPF_RETRANS,	/* the retransmit timer fired */
	SROCE_QPF_RNR,		/* the RNR timer fired */
	SROCE_QPF_FLUSH,	/* the QP entered ERR: flush everything */
	SROCE_QPF_SQD_NOTIFY,	/* in SQD: report IB_EVENT_SQ_DRAINED once */
	SROCE_QPF_TX_FULL,	/* the netdev's queue is full: pause sending */
	SROCE_QPF_RESP_REORDER,	/* the responder's reorder timer fired */
	SROCE_QPF_COMP_REORDER,	/* the completer's reorder timer fired */
	SROCE_QPF_RETIRE,	/* done WQEs are left to report (completer.c) */
};

/**
 * struct sroce_sq - the send queue
 * @q: the ring work requests are posted to (librxe's layout)
 * @lock: serialises kernel post_send (irqsave); user rings have no lock
 * @max_wr: capacity reported to the user
 * @max_sge: gather entries per WQE
 * @max_inline: inline bytes per WQE
 * @wqe: kernel copies of fetched WQEs, a ring of @size entries of @stride
 *	bytes; indices below are free-running, masked with @size - 1
 * @stride: bytes per @wqe entry
 * @size: entries in @wqe, a power of two >= the ring's capacity
 * @head: next @wqe entry to fill from the ring
 * @fetch_blocked: WQEs wait in the ring for room in @wqe
 * @fetch_more: the last fetch stopped at its budget, with room left
 */
struct sroce_sq {
	struct sroce_queue q;
	spinlock_t lock;	/* kernel post_send */
	u32 max_wr;
	u32 max_sge;
	u32 max_inline;
	void *wqe;
	u32 stride;
	u32 size;
	u32 head;
	bool fetch_blocked;
	bool fetch_more;
};

/**
 * struct sroce_rq - the receive queue of a QP without an SRQ
 * @q: the ring (struct rxe_recv_wqe slots)
 * @lock: serialises kernel post_recv (irqsave)
 * @max_wr: capacity reported to the user
 * @max_sge: scatter entries per WQE
 */
struct sroce_rq {
	struct sroce_queue q;
	spinlock_t lock;	/* kernel post_recv */
	u32 max_wr;
	u32 max_sge;
};

/**
 * struct sroce_qp_attr - what modify_qp set, as the engine uses it
 * @av: RC/UC: the path to the peer
 * @dest_qpn: RC/UC: the peer QP
 * @qkey: UD: our Q_Key
 * @mtu: path MTU in bytes
 * @path_mtu: the same, as an enum
 * @sq_psn: first PSN we send (copied to req/comp at RTS)
 * @rq_psn: first PSN we expect (copied to resp at RTR)
 * @timeout: local ACK timeout, 4.096 us * 2^timeout, 0 = infinite
 * @retry_cnt: retries on timeout or NAK sequence error
 * @rnr_retry: retries after RNR NAKs, 7 = infinite
 * @min_rnr_timer: the RNR NAK timer value we send (IBTA code)
 * @max_rd_atomic: reads/atomics we may have outstanding
 * @max_dest_rd_atomic: reads/atomics the peer may have outstanding with us
 * @access: IB_ACCESS_REMOTE_* the peer may use on this QP
 * @pkey_index: always 0
 * @port_num: always 1
 */
struct sroce_qp_attr {
	struct sroce_av av;
	u32 dest_qpn;
	u32 qkey;
	u32 mtu;
	enum ib_mtu path_mtu;
	u32 sq_psn;
	u32 rq_psn;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	int access;
	u16 pkey_index;
	u8 port_num;
};

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the core's object; must stay first
 * @pd: its protection domain
 * @scq: send completion queue
 * @rcq: receive completion queue
 * @srq: shared receive queue, or NULL
 * @is_user: the rings are mapped by a user process
 * @sig_all: every send WQE generates a completion
 * @state: IBTA QP state; written holding @engine_lock, read elsewhere
 *	with sroce_qp_state()
 * @engine_lock: held by the engine while it runs, and by modify/destroy
 *	while they change what it uses
 * @engine_busy: @engine_lock is held; read locklessly by the receive path
 * @work: the engine, see engine.h
 * @tx_work: the engine on @tx_cpu, for an RC QP's sending while it has
 *	packets in flight (engine.c, "A QP's home CPU")
 * @tx_cpu: the CPU the QP last sent requests or READ responses from, -1
 *	if never or on loopback
 * @flags: enum sroce_qp_flag bits
 * @flush_asked: flushes asked for (sroce_qp_ask_flush()), by anyone
 * @flush_seen: the engine's: @flush_asked when it last granted a flush
 * @flush_left: the engine's: ring slots the flush may still take before
 *	someone asks again
 * @rx_queue: received packets waiting for the engine
 * @rx_streak: messages received since the requester last started one;
 *	low while the QP answers what it gets (a ping-pong), high in a
 *	stream.  Read locklessly by the receive path.
 * @tx_full_tries: packets in a row the local netdev's queue dropped
 *	(the engine's; the work item reads it for its pause)
 * @retrans_timer: local ACK timeout
 * @rnr_timer: RNR NAK wait
 * @resp_reorder_timer: how long requests past a gap are held (reorder.c)
 * @comp_reorder_timer: how long responses past a gap are held
 * @attr: attributes from modify_qp
 * @src_port: UDP source port of our packets (ECMP entropy per QP)
 * @route: an RC or UC QP's route to its peer, per CPU (tx.c)
 * @peer_alive: jiffies when an RC peer last showed that our packets
 *	reach it (sroce_tx_peer_alive()); the engine's
 * @neigh_confirmed: @peer_alive when the peer's neighbour entry was last
 *	confirmed from it (tx.c); the engine's
 * @sq: send queue
 * @rq: receive queue (unused with @srq)
 * @req: requester state
 * @comp: completer state
 * @resp: responder state
 * @mcast_attached: multicast groups it is attached to (UD; under the
 *	device's mcast lock, mcast.c)
 * @mw_bound: a type 2 window was bound through it (set by its engine,
 *	read by destroy_qp once the engine is stopped; mw.c)
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_pd *pd;
	struct sroce_cq *scq;
	struct sroce_cq *rcq;
	struct sroce_srq *srq;
	bool is_user;
	bool sig_all;

	enum ib_qp_state state;

	spinlock_t engine_lock;		/* the engine; see above */
	bool engine_busy;
	struct work_struct work;
	struct work_struct tx_work;
	int tx_cpu;
	unsigned long flags;
	atomic_t flush_asked;
	int flush_seen;
	u32 flush_left;
	struct sk_buff_head rx_queue;
	u8 rx_streak;
	u8 tx_full_tries;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	struct hrtimer resp_reorder_timer;
	struct hrtimer comp_reorder_timer;

	struct sroce_qp_attr attr;
	u16 src_port;
	struct dst_cache route;
	unsigned long peer_alive;
	unsigned long neigh_confirmed;

	struct sroce_sq sq;
	struct sroce_rq rq;

	struct sroce_req req;
	struct sroce_comp comp;
	struct sroce_resp resp;

	unsigned int mcast_attached;
	bool mw_bound;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

static inline struct sroce_dev *sroce_qp_dev(const struct sroce_qp *qp)
{
	return container_of(qp->ibqp.device, struct sroce_dev, ibdev);
}

static inline struct sroce_send_wqe *sroce_sq_wqe(const struct sroce_qp *qp,
						  u32 index)
{
	return qp->sq.wqe + (size_t)(index & (qp->sq.size - 1)) * qp->sq.stride;
}

static inline enum ib_qp_state sroce_qp_state(const struct sroce_qp *qp)
{
	return READ_ONCE(qp->state);
}

/* RC: requests were sent that the peer has not acknowledged. */
static inline bool sroce_req_outstanding(const struct sroce_qp *qp)
{
	return sroce_psn_cmp(qp->comp.psn, qp->req.psn) < 0;
}

/* The states in which a QP takes packets in. */
static inline bool sroce_qp_can_receive(const struct sroce_qp *qp)
{
	enum ib_qp_state s = sroce_qp_state(qp);

	return s == IB_QPS_RTR || s == IB_QPS_RTS || s == IB_QPS_SQD ||
	       s == IB_QPS_SQE;
}

/* qp.c */
void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_ask_flush(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);
struct sroce_qp *sroce_qp_lookup_rcu(struct sroce_dev *sdev, u32 qpn);
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

#endif /* SROCE_QP_H */
