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
#include <linux/udp.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "av.h"
#include "mem.h"
#include "mr.h"
#include "queue.h"
#include "wire.h"

struct sroce_cq;
struct sroce_srq;
struct sroce_pd;

#define SROCE_MIN_QPN		16		/* 0, 1: SMI and GSI */
#define SROCE_MAX_QPN		0xfffffe	/* 0xffffff is multicast */
#define SROCE_GSI_QPN		1

/* Requester: unacknowledged packets in flight, and AckReq spacing. */
#define SROCE_MAX_UNACKED_PSNS	512
#define SROCE_ACK_EVERY		64
/* Packets one pass of the engine handles per direction before yielding. */
#define SROCE_BUDGET		64
/* Completions one pass of a flush posts (the SQ's and the RQ's each) */
#define SROCE_FLUSH_BUDGET	256
/*
 * An RC QP's responder and completer each hold up to this many packets
 * that arrive past a PSN gap, for up to this long, before they take the
 * gap for a loss (reorder.c): over a veth or lo a QP's packets sent from
 * two CPUs are often overtaken, not lost.
 */
#define SROCE_REORDER_HOLD	32
#define SROCE_REORDER_WAIT_US	4000

/* qp->flags bits, set from any context */
enum sroce_qp_flag {
	SROCE_QPF_DEAD,		/* being destroyed: do nothing more */
	SROCE_QPF_RETRANS,	/* the retransmit timer fired */
	SROCE_QPF_RNR,		/* the RNR timer fired */
	SROCE_QPF_FLUSH,	/* the QP entered ERR: flush everything */
	SROCE_QPF_SQD_NOTIFY,	/* in SQD: report IB_EVENT_SQ_DRAINED once */
	SROCE_QPF_TX_FULL,	/* the netdev's queue is full: pause sending */
	SROCE_QPF_REORDER,	/* the reorder timer fired: a gap is a loss */
};

/* struct sroce_send_wqe::state */
enum sroce_wqe_state {
	SROCE_WQE_PENDING,	/* fetched, nothing sent yet */
	SROCE_WQE_ACTIVE,	/* some packets sent */
	SROCE_WQE_SENT,		/* every packet sent, waiting for the peer */
	SROCE_WQE_DONE,		/* complete (status set), not yet retired */
};

/**
 * struct sroce_send_wqe - a send work request, in kernel memory
 * @wr: copy of the ring slot's work request (user rings are hostile: only
 *	this copy is ever validated and used)
 * @av: UD: the destination, resolved from the AH when fetched
 * @length: payload bytes, computed by the driver
 * @num_sge: entries in @sge
 * @is_inline: the payload is in @inline_data, not behind @sge
 * @state: see enum sroce_wqe_state
 * @status: completion status once DONE
 * @first_psn: PSN of the first packet (RC/UC)
 * @last_psn: PSN of the last packet; a READ consumes one PSN per
 *	response packet
 * @ssn: send sequence number
 * @rd_counted: a READ or atomic counted in req.rd_atomic
 * @sge: the gather list (or @inline_data), sized by the QP's limits
 */
struct sroce_send_wqe {
	struct rxe_send_wr wr;
	struct sroce_av av;
	u32 length;
	u32 num_sge;
	bool is_inline;
	u8 state;
	enum ib_wc_status status;
	u32 first_psn;
	u32 last_psn;
	u32 ssn;
	bool rd_counted;
	union {
		DECLARE_FLEX_ARRAY(struct ib_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
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
 * struct sroce_req - requester state (send side of RC/UC/UD)
 * @psn: next PSN to send
 * @next: index (in sq.wqe) of the WQE being sent or next to send
 * @offset: payload bytes of WQE @next already sent
 * @tail: index of the oldest WQE not yet retired
 * @started: one past the newest WQE ever started (a WQE that go-back-N
 *	made pending again may restart in SQD, a new one may not)
 * @rd_atomic: reads and atomics outstanding
 * @ssn: next send sequence number
 * @since_ackreq: packets sent since the last one with AckReq
 * @cur: where in WQE @next's gather list @offset is
 */
struct sroce_req {
	u32 psn;
	u32 next;
	u32 offset;
	u32 tail;
	u32 started;
	u32 rd_atomic;
	u32 ssn;
	u32 since_ackreq;
	struct sroce_sgl_cursor cur;
};

/**
 * struct sroce_comp - completer state (RC requester's receive side)
 * @psn: oldest PSN not yet acknowledged
 * @read_off: bytes of the READ at @psn's WQE already placed
 * @retry_left: retries left before IB_WC_RETRY_EXC_ERR
 * @rnr_left: RNR retries left before IB_WC_RNR_RETRY_EXC_ERR
 * @rnr_wait: sending stopped until the RNR timer fires
 * @seq_retry: a go-back-N for a sequence NAK is under way; until the
 *	peer makes progress, further sequence NAKs are not retried
 * @cur: where in that READ's scatter list @read_off is
 * @held: responses and ACKs past a gap, in PSN order, waiting for it
 */
struct sroce_comp {
	u32 psn;
	u32 read_off;
	struct sroce_sgl_cursor cur;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;
	bool seq_retry;
	struct sk_buff_head held;
};

/* A responder resource: one READ or atomic the peer asked for. */
enum sroce_res_type {
	SROCE_RES_NONE,
	SROCE_RES_READ,
	SROCE_RES_ATOMIC,
};

/**
 * struct sroce_resp_res - a READ or atomic request we answered or are
 *	answering, kept so that duplicates can be answered again
 * @type: see enum sroce_res_type
 * @first_psn: PSN of the request (and of the first response)
 * @last_psn: PSN of the last response packet
 * @va: READ: remote address asked for
 * @rkey: READ: the key
 * @length: READ: bytes asked for
 * @psn: READ: next response PSN to send
 * @offset: READ: bytes sent so far
 * @atomic_orig: ATOMIC: the original value returned
 * @msn: MSN when the request was accepted, for its responses
 * @replay: answered in full once already, being answered again for a
 *	duplicate
 */
struct sroce_resp_res {
	u8 type;
	bool replay;
	u32 first_psn;
	u32 last_psn;
	u64 va;
	u32 rkey;
	u32 length;
	u32 psn;
	u32 offset;
	u64 atomic_orig;
	u32 msn;
};

/**
 * struct sroce_resp - responder state (receive side of requests)
 * @psn: next PSN expected
 * @msn: message sequence number of the last message completed
 * @nak_sent: a PSN sequence error NAK is out; don't send another until an
 *	in-order packet arrives
 * @last_op: opcode of the last accepted packet (to check FIRST/MIDDLE/LAST)
 * @in_msg: a multi-packet SEND or WRITE is in progress
 * @drop_msg: UC: discard until the next FIRST/ONLY (a packet was lost)
 * @have_wqe: @wqe holds the receive WQE the current SEND fills
 * @wqe: that receive WQE
 * @cur: where in @wqe the next payload goes
 * @recv_len: bytes received so far in the current SEND
 * @write_va: RDMA WRITE: where the next payload goes
 * @write_rkey: RDMA WRITE: its key
 * @write_left: RDMA WRITE: bytes still expected (from the RETH)
 * @ack_pending: an ACK is owed for @ack_psn
 * @ack_psn: the PSN to acknowledge
 * @nak_pending: a NAK waits for the responses queued before it
 * @nak_syndrome: its AETH syndrome
 * @nak_psn: its PSN
 * @fail_pending: the QP goes to error once that NAK is out, and takes
 *	no more requests meanwhile
 * @res: @nres responder resources, a ring (SROCE_MAX_RD_ATOM entries)
 * @nres: entries in @res
 * @res_head: next entry of @res to use
 * @res_send: index of the READ whose responses are being sent, or -1
 * @streaming: responses have left and more are to follow (the engine's;
 *	read locklessly for the QP's home CPU, qp.c)
 * @held: requests past a gap at @psn, in PSN order, waiting for it
 */
struct sroce_resp {
	u32 psn;
	u32 msn;
	bool nak_sent;
	u8 last_op;
	bool in_msg;
	bool drop_msg;
	bool have_wqe;
	struct sroce_recv_wqe_copy wqe;
	struct sroce_sgl_cursor cur;
	u32 recv_len;
	u64 write_va;
	u32 write_rkey;
	u32 write_left;
	bool ack_pending;
	u32 ack_psn;
	bool nak_pending;
	u8 nak_syndrome;
	u32 nak_psn;
	bool fail_pending;
	struct sroce_resp_res *res;
	u32 nres;
	u32 res_head;
	int res_send;
	bool streaming;
	struct sk_buff_head held;
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
 * @state_lock: protects @state (bh: the receive path reads it)
 * @state: IBTA QP state
 * @engine_lock: held by the engine while it runs, and by modify/destroy
 *	while they change what it uses
 * @engine_busy: @engine_lock is held; read locklessly by the receive path
 * @work: the engine, see the top of this file
 * @tx_work: the engine on @tx_cpu, for an RC QP's sending while it has
 *	packets in flight (qp.c, "A QP's home CPU")
 * @tx_cpu: the CPU the QP last sent requests or READ responses from, -1
 *	if never or on loopback
 * @flags: enum sroce_qp_flag bits
 * @rx_queue: received packets waiting for the engine
 * @rx_streak: messages received since the requester last started one;
 *	low while the QP answers what it gets (a ping-pong), high in a
 *	stream.  Read locklessly by the receive path.
 * @tx_full_tries: packets in a row the local netdev's queue dropped
 *	(the engine's; the work item reads it for its pause)
 * @retrans_timer: local ACK timeout
 * @rnr_timer: RNR NAK wait
 * @reorder_timer: how long packets past a gap are held (reorder.c)
 * @attr: attributes from modify_qp
 * @src_port: UDP source port of our packets (ECMP entropy per QP)
 * @sq: send queue
 * @rq: receive queue (unused with @srq)
 * @req: requester state
 * @comp: completer state
 * @resp: responder state
 */
struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_pd *pd;
	struct sroce_cq *scq;
	struct sroce_cq *rcq;
	struct sroce_srq *srq;
	bool is_user;
	bool sig_all;

	spinlock_t state_lock;		/* @state */
	enum ib_qp_state state;

	spinlock_t engine_lock;		/* the engine; see above */
	bool engine_busy;
	struct work_struct work;
	struct work_struct tx_work;
	int tx_cpu;
	unsigned long flags;
	struct sk_buff_head rx_queue;
	u8 rx_streak;
	u8 tx_full_tries;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	struct hrtimer reorder_timer;

	struct sroce_qp_attr attr;
	u16 src_port;

	struct sroce_sq sq;
	struct sroce_rq rq;

	struct sroce_req req;
	struct sroce_comp comp;
	struct sroce_resp resp;
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

/* The states in which a QP takes packets in. */
static inline bool sroce_qp_can_receive(const struct sroce_qp *qp)
{
	enum ib_qp_state s = sroce_qp_state(qp);

	return s == IB_QPS_RTR || s == IB_QPS_RTS || s == IB_QPS_SQD ||
	       s == IB_QPS_SQE;
}

/* qp.c */
void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);
struct sroce_qp *sroce_qp_lookup_rcu(struct sroce_dev *sdev, u32 qpn);
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* verbs.c: posting */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

/* reorder.c: packets past a gap, held for a moment in case it fills */
enum sroce_held_result {
	SROCE_HELD_ADDED,
	SROCE_HELD_COPY,
	SROCE_HELD_FULL,
};

enum sroce_held_result sroce_held_insert(struct sk_buff_head *held, u32 psn,
					 struct sk_buff *skb, unsigned int max);
bool sroce_reorder_hold(struct sroce_qp *qp, struct sk_buff_head *held,
			u32 psn, struct sk_buff *skb);
void sroce_reorder_arm(struct sroce_qp *qp);
enum hrtimer_restart sroce_reorder_timer_fn(struct hrtimer *t);

#endif /* SROCE_QP_H */
