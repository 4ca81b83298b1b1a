// SPDX-License-Identifier: GPL-2.0-only
/*
 * Queue pairs: the QP verbs -- create, modify (the IBTA state machine),
 * query, destroy -- and the QP table.  What a QP does on the wire runs in
 * its engine (engine.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "sroce.h"
#include "completer.h"
#include "cq.h"
#include "engine.h"
#include "mcast.h"
#include "mw.h"
#include "netdev.h"
#include "qp.h"
#include "requester.h"
#include "responder.h"
#include "srq.h"
#include "trace.h"
#include "tx.h"

#define SROCE_MIN_QPN		16		/* 0, 1: SMI and GSI */
#define SROCE_MAX_QPN		0xfffffe	/* 0xffffff is multicast */
#define SROCE_GSI_QPN		1

/*
 * Every change of state is made holding the engine lock: by modify_qp,
 * or by the engine itself (sroce_qp_error()).  Readers elsewhere use
 * sroce_qp_state().
 */
static void sroce_qp_set_state(struct sroce_qp *qp, enum ib_qp_state state)
{
	lockdep_assert_held(&qp->engine_lock);
	if (qp->state != state)
		trace_sroce_qp_state(&qp->ibqp, qp->state, state);
	WRITE_ONCE(qp->state, state);
}

/*
 * A completion error or a fatal protocol error: the QP goes to ERR and
 * everything outstanding is flushed by the engine.  Context: the QP's
 * engine, holding qp->engine_lock.
 */
void sroce_qp_error(struct sroce_qp *qp)
{
	sroce_qp_set_state(qp, IB_QPS_ERR);
	sroce_qp_ask_flush(qp);
	sroce_qp_kick(qp);
}

/**
 * sroce_qp_ask_flush - have the engine flush a QP in ERR
 * @qp: the QP
 *
 * Each call lets the engine take up to a ring's worth more from the
 * user-written rings (see sroce_qp_flush() in engine.c).  The caller
 * kicks or runs the engine.
 * Context: any.
 */
void sroce_qp_ask_flush(struct sroce_qp *qp)
{
	atomic_inc(&qp->flush_asked);
	/* The increment before the bit the engine tests and clears. */
	smp_mb__before_atomic();
	set_bit(SROCE_QPF_FLUSH, &qp->flags);
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
	sroce_engine_init(qp);
	__skb_queue_head_init(&qp->comp.held);

	err = sroce_tx_qp_init(qp);
	if (err)
		goto err_count;
	err = sroce_sq_init(qp, init, uctx);
	if (err)
		goto err_route;
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
err_route:
	sroce_tx_qp_cleanup(qp);
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

	if (mask & IB_QP_AV) {
		a->av = *av;
		sroce_tx_qp_path_changed(qp);
	}
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
		sroce_engine_reset(qp);
		sroce_comp_reset(qp);
		sroce_req_reset(qp);
		sroce_resp_reset(qp);
		break;
	case IB_QPS_RTR:
		sroce_resp_reset(qp);
		qp->resp.psn = qp->attr.rq_psn;
		break;
	case IB_QPS_RTS:
		if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) {
			WRITE_ONCE(qp->req.psn, qp->attr.sq_psn);
			WRITE_ONCE(qp->comp.psn, qp->attr.sq_psn);
			WRITE_ONCE(qp->req.psn_high, qp->attr.sq_psn);
			sroce_cwnd_init(&qp->req.cwnd);
		}
		qp->comp.retry_left = qp->attr.retry_cnt;
		qp->comp.rnr_left = qp->attr.rnr_retry;
		break;
	case IB_QPS_ERR:
		sroce_qp_ask_flush(qp);
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

	/*
	 * No new packets: nobody can find the QP after the grace period,
	 * by its number or through a multicast group.
	 */
	sroce_mcast_qp_destroy(qp);
	xa_erase_bh(&sdev->qp_xa, ibqp->qp_num);
	synchronize_rcu();

	sroce_engine_stop(qp);
	__skb_queue_purge(&qp->comp.held);
	/* Its type 2 windows become free (mw.h). */
	sroce_mw_qp_destroy(qp);

	sroce_resp_cleanup(qp);
	sroce_rq_cleanup(qp);
	sroce_sq_cleanup(qp);
	sroce_tx_qp_cleanup(qp);
	atomic_dec(&sdev->num_qps);
	return 0;
}
