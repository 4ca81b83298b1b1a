// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared receive queues: the SRQ verbs and sroce_srq_take(), through
 * which the data path gets receive WQEs.  Locking is described in srq.h.
 */
#include <linux/idr.h>
#include <linux/uaccess.h>

#include "sroce.h"
#include "srq.h"

/* The layouts librxe uses. */
static_assert(sizeof(struct rxe_create_srq_resp) == 24);
static_assert(sizeof(struct rxe_modify_srq_cmd) == 8);

/*
 * SRQ numbers, unique across the module.  librxe does not use them; they
 * are reported because the ABI has room for one, and help debugging.
 */
static DEFINE_IDA(sroce_srq_ida);

static void sroce_srq_event(struct sroce_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * sroce_srq_take - take the next receive WQE from an SRQ
 * @srq: the SRQ
 * @out: the WQE, copied into kernel memory and checked (see
 *	sroce_recvq_take())
 *
 * If the SRQ limit is armed and fewer WQEs than the limit remain, the
 * limit is disarmed and IB_EVENT_SRQ_LIMIT_REACHED reported, once.
 *
 * Context: any, including softirq; takes srq->lock with interrupts
 * saved, and calls the event handler without it.
 * Return: 0; -ENOENT if no WQE is posted; -EINVAL for a malformed WQE,
 * which is consumed and must be completed in error with @out->wr_id.
 */
int sroce_srq_take(struct sroce_srq *srq, struct sroce_recv_wqe_copy *out)
{
	bool fire = false;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&srq->lock, flags);
	err = sroce_recvq_take(&srq->queue, srq->max_sge, out);
	if (err != -ENOENT && srq->limit &&
	    sroce_queue_cons_count(&srq->queue) < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (fire)
		sroce_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	return err;
}

/**
 * sroce_create_srq - the create_srq verb
 * @ibsrq: the SRQ, allocated by the core
 * @init: the attributes; attr.max_wr is updated to the real size
 * @udata: for a user SRQ, room for struct rxe_create_srq_resp (where to
 *	mmap the ring); NULL for a kernel SRQ
 *
 * Context: process context.
 * Return: 0, -EOPNOTSUPP for XRC and tag-matching SRQs, -EINVAL for bad
 * sizes or response buffer, -ENOMEM, or -EFAULT.
 */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct rxe_create_srq_resp resp = {};
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SROCE_MAX_SRQ_WR ||
	    attr->max_sge > SROCE_MAX_SRQ_SGE ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	if (atomic_inc_return(&sdev->num_srqs) > SROCE_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}

	err = ida_alloc_min(&sroce_srq_ida, 1, GFP_KERNEL);
	if (err < 0)
		goto err_count;
	srq->srq_num = err;

	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->producer_lock);
	srq->max_sge = attr->max_sge;
	srq->limit = attr->srq_limit;
	err = sroce_queue_init(&srq->queue, sroce_udata_ucontext(udata),
			       attr->max_wr, sroce_recvq_elem_size(srq->max_sge),
			       SROCE_QUEUE_DRIVER_CONSUMES);
	if (err)
		goto err_ida;

	if (udata) {
		sroce_queue_mminfo(&srq->queue, &resp.mi);
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}

	attr->max_wr = sroce_queue_capacity(&srq->queue);
	return 0;

err_queue:
	sroce_queue_free(&srq->queue);
err_ida:
	ida_free(&sroce_srq_ida, srq->srq_num);
err_count:
	atomic_dec(&sdev->num_srqs);
	return err;
}

/*
 * Replace the ring by one of @max_wr WQEs, keeping what is posted.  For
 * a user SRQ the new ring's mminfo is written where librxe's command
 * points (struct rxe_modify_srq_cmd) before the switch, since userspace
 * must learn of it.
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr,
			    struct ib_udata *udata)
{
	struct ib_ucontext *uctx = NULL;
	struct rxe_modify_srq_cmd cmd;
	struct sroce_queue new_q;
	unsigned long flags;
	struct mminfo mi;
	int err;

	if (sroce_queue_is_user(&srq->queue)) {
		uctx = sroce_udata_ucontext(udata);
		if (!uctx || udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}

	err = sroce_queue_init(&new_q, uctx, max_wr, srq->queue.elem_size,
			       SROCE_QUEUE_DRIVER_CONSUMES);
	if (err)
		return err;

	if (uctx) {
		sroce_queue_mminfo(&new_q, &mi);
		if (copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi,
				 sizeof(mi))) {
			err = -EFAULT;
			goto out;
		}
	}

	spin_lock_irqsave(&srq->lock, flags);
	spin_lock(&srq->producer_lock);
	err = sroce_queue_resize_commit(&srq->queue, &new_q);
	spin_unlock(&srq->producer_lock);
	spin_unlock_irqrestore(&srq->lock, flags);

out:
	sroce_queue_free(&new_q);	/* the old ring on success */
	return err;
}

/**
 * sroce_modify_srq - the modify_srq verb
 * @ibsrq: the SRQ
 * @attr: the new max_wr and/or srq_limit
 * @mask: IB_SRQ_MAX_WR and/or IB_SRQ_LIMIT
 * @udata: for a user SRQ, struct rxe_modify_srq_cmd
 *
 * IB_SRQ_MAX_WR resizes, keeping the posted WQEs; IB_SRQ_LIMIT arms the
 * limit event (0 disarms).  Everything is checked before anything
 * changes; a resize that fails leaves the limit alone.
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad mask, size or limit (including a size too
 * small for the WQEs posted), -ENOMEM, or -EFAULT.
 */
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	u32 capacity;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;

	if (mask & IB_SRQ_MAX_WR) {
		if (!attr->max_wr || attr->max_wr > SROCE_MAX_SRQ_WR)
			return -EINVAL;
		capacity = sroce_queue_capacity_for(attr->max_wr);
	} else {
		capacity = sroce_queue_capacity(&srq->queue);
	}
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > capacity)
		return -EINVAL;

	if (mask & IB_SRQ_MAX_WR) {
		err = sroce_srq_resize(srq, attr->max_wr, udata);
		if (err)
			return err;
	}

	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return 0;
}

/**
 * sroce_query_srq - the query_srq verb
 * @ibsrq: the SRQ
 * @attr: filled with the size, max_sge and armed limit
 *
 * Context: any.
 * Return: 0.
 */
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = sroce_queue_capacity(&srq->queue);
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * sroce_destroy_srq - the destroy_srq verb
 * @ibsrq: the SRQ; the core has checked that no QP uses it
 * @udata: unused
 *
 * A user ring lives on until userspace unmaps it.
 *
 * Context: process context.
 * Return: 0.
 */
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	/* rdma res may be reading the ring's fill (restrack.c) until now */
	sroce_queue_free_under(&srq->queue, &srq->lock);
	ida_free(&sroce_srq_ida, srq->srq_num);
	atomic_dec(&to_sdev(ibsrq->device)->num_srqs);
	return 0;
}

/**
 * sroce_post_srq_recv - the post_srq_recv verb, for kernel SRQs
 * @ibsrq: the SRQ
 * @wr: a chain of receive work requests
 * @bad_wr: set to the first one not posted, on failure
 *
 * Context: any; takes srq->producer_lock with interrupts saved.
 * Return: 0, -EINVAL for a bad scatter list or a user SRQ, or -ENOMEM
 * if the SRQ is full.
 */
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (WARN_ON_ONCE(sroce_queue_is_user(&srq->queue))) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->producer_lock, flags);
	for (; wr; wr = wr->next) {
		err = sroce_recvq_post_one(&srq->queue, srq->max_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->producer_lock, flags);
	return err;
}
