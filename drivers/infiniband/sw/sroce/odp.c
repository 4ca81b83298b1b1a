// SPDX-License-Identifier: GPL-2.0-only
/*
 * On-demand paging: ODP user MRs through ib_umem_odp, their mmu interval
 * notifier, the checks the data path makes before it touches their
 * memory, the device's fault queue and its work item, and advise_mr.  The
 * rules are in odp.h; what the engine does while a fault is under way is
 * in Documentation/sroce.rst ("On-demand paging").
 */
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "odp.h"
#include "odp_implicit.h"

#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)

/**
 * struct sroce_odp_fault - a range of an ODP MR to fault in
 * @list: in the device's queue
 * @key: the MR's lkey/rkey when the fault was asked for
 * @va: the first user address, page aligned
 * @len: bytes from @va
 * @write: the access writes: the pages must be mapped writable
 * @want_write: map them writable if that can be done (a writable MR:
 *	a write after a read then needs no fault of its own)
 * @prefetch: asked by advise_mr (counted as a prefetch, not a fault)
 * @no_fault: map only what is present already (PREFETCH_NO_FAULT)
 */
struct sroce_odp_fault {
	struct list_head list;
	u32 key;
	u64 va;
	u64 len;
	bool write;
	bool want_write;
	bool prefetch;
	bool no_fault;
};

static struct ib_umem_odp *sroce_mr_odp(const struct sroce_mr *mr)
{
	return to_ib_umem_odp(mr->umem);
}

/* An implicit ODP MR (odp_implicit.h): its umem is the children's root. */
static bool sroce_mr_implicit(const struct sroce_mr *mr)
{
	return sroce_mr_odp(mr)->is_implicit_odp;
}

/* The user address of @iova in @mr (their difference is fixed). */
static u64 sroce_odp_uva(const struct sroce_mr *mr, u64 iova)
{
	return mr->umem->address + (iova - mr->iova);
}

/*
 * The MM takes pages of the range away: clear them, after the accesses
 * to the MR under way (odp.h).  Called with the notifier's range locked;
 * when it may not block (the OOM reaper) umem_mutex is only tried.
 * mr->lock is a spinning lock, held by accesses that never sleep.
 */
static bool sroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct sroce_mr *mr;
	u64 start, end;

	if (mmu_notifier_range_blockable(range))
		mutex_lock(&odp->umem_mutex);
	else if (!mutex_trylock(&odp->umem_mutex))
		return false;

	start = max(ib_umem_start(odp), range->start);
	end = min(ib_umem_end(odp), range->end);
	mr = odp->private;
	if (!mr) {
		/* Not attached yet (sroce_odp_attach()): no access either. */
		mmu_interval_set_seq(mni, cur_seq);
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	} else {
		write_lock_bh(&mr->lock);
		mmu_interval_set_seq(mni, cur_seq);
		ib_umem_odp_unmap_dma_pages(odp, start, end);
		write_unlock_bh(&mr->lock);
		sroce_count(mr->sdev, SROCE_CNT_ODP_INVALIDATIONS);
		/* A child of an implicit MR that maps nothing goes. */
		if (odp != sroce_mr_odp(mr) && !odp->npages)
			sroce_odp_imr_emptied(mr);
	}
	mutex_unlock(&odp->umem_mutex);
	return true;
}

/* Of explicit ODP MRs and of the children of implicit ones. */
const struct mmu_interval_notifier_ops sroce_odp_notifier_ops = {
	.invalidate = sroce_odp_invalidate,
};

/**
 * sroce_odp_get - the ODP umem of a new ODP MR
 * @ibdev: the device
 * @start: the user address
 * @length: bytes
 * @access: the MR's access flags, IB_ACCESS_ON_DEMAND among them
 *
 * Nothing is pinned or mapped.  Process context (reg_user_mr).  With
 * start 0 and length U64_MAX, the root of an implicit ODP MR
 * (odp_implicit.h).
 *
 * Return: the umem, or an ERR_PTR.  Release it with
 * sroce_odp_umem_release().
 */
struct ib_umem *sroce_odp_get(struct ib_device *ibdev, u64 start, u64 length,
			      int access)
{
	struct ib_umem_odp *odp;

	if (!start && length == U64_MAX)
		odp = sroce_odp_imr_get(ibdev, access);
	else
		odp = ib_umem_odp_get(ibdev, start, length, access,
				      &sroce_odp_notifier_ops);
	if (IS_ERR(odp))
		return ERR_CAST(odp);
	return &odp->umem;
}

/**
 * sroce_odp_attach - make @umem the memory of @mr
 * @mr: the new MR, not published yet
 * @umem: from sroce_odp_get()
 *
 * From here on invalidations exclude @mr's accesses.
 */
void sroce_odp_attach(struct sroce_mr *mr, struct ib_umem *umem)
{
	struct ib_umem_odp *odp = to_ib_umem_odp(umem);

	if (odp->is_implicit_odp) {
		/* No notifier: only the children have one. */
		sroce_odp_imr_attach(mr, odp);
		mr->umem = umem;
		mr->odp = true;
		return;
	}
	mutex_lock(&odp->umem_mutex);
	mr->umem = umem;
	mr->odp = true;
	odp->private = mr;
	mutex_unlock(&odp->umem_mutex);
}

/**
 * sroce_odp_umem_release - let the umem of a user MR go
 * @umem: any user MR's (ib_umem_get() or sroce_odp_get()), or NULL
 *
 * An implicit ODP MR's children go before their root.  No access uses
 * the MR any more.  Process context.
 */
void sroce_odp_umem_release(struct ib_umem *umem)
{
	if (umem && umem->is_odp && to_ib_umem_odp(umem)->is_implicit_odp)
		sroce_odp_imr_release(to_ib_umem_odp(umem));
	else
		ib_umem_release(umem);
}

/* Pages an ODP MR has mapped now (rdma res); 0 for any other MR. */
u32 sroce_odp_mapped_pages(struct sroce_mr *mr)
{
	if (!sroce_mr_is_odp(mr))
		return 0;
	if (sroce_mr_implicit(mr))
		return sroce_odp_imr_mapped_pages(mr);
	return READ_ONCE(sroce_mr_odp(mr)->npages);
}

/* ---------------------------------------------------------- the queue */

/*
 * A fault like @f is queued already (@lock held).  A prefetch does not
 * stand in for an access's fault: it would not remember a failure.
 */
static bool sroce_odp_queued(struct sroce_odp_queue *q,
			     const struct sroce_odp_fault *f)
{
	struct sroce_odp_fault *e;

	/* At most SROCE_ODP_FAULT_MAX entries. */
	list_for_each_entry(e, &q->list, list)
		if (e->key == f->key && e->va <= f->va &&
		    f->va - e->va < e->len && (e->write || !f->write) &&
		    !e->no_fault && (!e->prefetch || f->prefetch))
			return true;
	return false;
}

/* Queue @f, or free it and count a drop.  Any context. */
static void sroce_odp_queue(struct sroce_dev *sdev, struct sroce_odp_fault *f)
{
	struct sroce_odp_queue *q = &sdev->odp;
	bool drop = false, queued = false;

	spin_lock_bh(&q->lock);
	if (q->dead) {
		drop = true;
	} else if (sroce_odp_queued(q, f)) {
		/* the one queued will do */
	} else if (q->len >= SROCE_ODP_FAULT_MAX) {
		drop = true;
	} else {
		list_add_tail(&f->list, &q->list);
		q->len++;
		queued = true;
	}
	spin_unlock_bh(&q->lock);
	if (!queued)
		kfree(f);
	if (drop)
		sroce_count(sdev, SROCE_CNT_ODP_FAULT_DROPS);
	else if (queued)
		queue_work(system_unbound_wq, &q->work);
}

/*
 * Ask for the pages of @mr from @uva (the first one missing) to @end
 * (the end of the access, at most a chunk on) to be faulted in.
 * Any context; the MR is held by the caller.
 */
static void sroce_odp_ask(struct sroce_mr *mr, u64 uva, u64 end, bool write)
{
	struct sroce_odp_fault *f;

	f = kzalloc(sizeof(*f), GFP_ATOMIC | __GFP_NOWARN);
	if (!f) {
		sroce_count(mr->sdev, SROCE_CNT_ODP_FAULT_DROPS);
		return;
	}
	f->key = mr->key;
	f->va = uva;
	f->len = min_t(u64, end - uva, SROCE_ODP_FAULT_CHUNK);
	f->write = write;
	f->want_write = write || mr->umem->writable;
	sroce_odp_queue(mr->sdev, f);
}

/* ----------------------------------------------------------- faulting */

/*
 * Map [@va, @va + @len) of @odp (inside it).  Process context; sleeps.
 * Return: 0 or the error of ib_umem_odp_map_dma_and_lock().
 */
static int sroce_odp_map(struct ib_umem_odp *odp, u64 va, u64 len, bool write,
			 bool fault)
{
	u64 mask = ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
	int ret;

	ret = ib_umem_odp_map_dma_and_lock(odp, va, len, mask, fault);
	if (ret < 0)
		return ret;
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/**
 * sroce_odp_set_err - remember that the page at @va of @mr cannot be had
 * @mr: an ODP MR
 * @va: a user address in the page
 *
 * For the access that asked (sroce_odp_missing()).
 */
void sroce_odp_set_err(struct sroce_mr *mr, u64 va)
{
	WRITE_ONCE(mr->odp_err_when, jiffies);
	/* Bit 0 tells an error at address 0 from none. */
	WRITE_ONCE(mr->odp_err_va, ALIGN_DOWN(va, PAGE_SIZE) | 1);
}

/**
 * sroce_odp_fault_range - fault in a range of an ODP umem of @mr
 * @mr: the MR, referenced
 * @odp: its umem, or a child of it (implicit ODP)
 * @va: the first user address, inside @odp
 * @len: bytes, inside @odp
 * @write: map writable
 * @how: SROCE_ODP_MAP_* (odp.h)
 *
 * If the range cannot be faulted in at once, page by page from @va, so
 * that the pages before the first bad one are mapped and that one is
 * remembered (sroce_odp_set_err()) for the access that asked, if one
 * did (SROCE_ODP_MAP_ACCESS).  Process context; sleeps.
 *
 * Return: 0 or the error of the first bad page.
 */
int sroce_odp_fault_range(struct sroce_mr *mr, struct ib_umem_odp *odp,
			  u64 va, u64 len, bool write, unsigned int how)
{
	u64 psize = BIT_ULL(odp->page_shift), end = va + len;
	int err;

	if (write && !mr->umem->writable)
		return -EPERM;
	err = sroce_odp_map(odp, va, len, write, how & SROCE_ODP_MAP_FAULT);
	if (!err || !(how & SROCE_ODP_MAP_FAULT))
		return err;
	for (va = ALIGN_DOWN(va, psize); va < end; va += psize) {
		err = sroce_odp_map(odp, va, psize, write, true);
		if (err) {
			if (how & SROCE_ODP_MAP_ACCESS)
				sroce_odp_set_err(mr, va);
			return err;
		}
		cond_resched();
	}
	return 0;
}

/*
 * Fault in [@va, @va + @len) of @mr (inside it): of its umem, or of the
 * children of an implicit MR.
 */
static int sroce_odp_fault_mr(struct sroce_mr *mr, u64 va, u64 len,
			      bool write, unsigned int how)
{
	if (sroce_mr_implicit(mr))
		return sroce_odp_imr_fault(mr, va, len, write, how);
	return sroce_odp_fault_range(mr, sroce_mr_odp(mr), va, len, write,
				     how);
}

/* Carry out one queued fault.  Process context. */
static void sroce_odp_do_fault(struct sroce_dev *sdev,
			       const struct sroce_odp_fault *f)
{
	unsigned int how = (f->no_fault ? 0 : SROCE_ODP_MAP_FAULT) |
			   (f->prefetch ? 0 : SROCE_ODP_MAP_ACCESS);
	struct sroce_mr *mr = sroce_mr_get(sdev, f->key);
	struct ib_umem_odp *odp;
	u64 start, end;
	int err;

	/* Gone, or another registration of the index: nothing to do. */
	if (!mr)
		return;
	if (READ_ONCE(mr->key) != f->key || !sroce_mr_is_odp(mr))
		goto out;
	odp = sroce_mr_odp(mr);
	start = f->va;
	end = f->va + f->len;
	if (!odp->is_implicit_odp) {
		start = max_t(u64, start, ib_umem_start(odp));
		end = min_t(u64, end, ib_umem_end(odp));
	}
	if (start >= end)
		goto out;
	err = sroce_odp_fault_mr(mr, start, end - start, f->want_write, how);
	/*
	 * Readable is enough (a read-only mapping of a writable MR).  An
	 * error recorded stays until an access takes it: clearing it here
	 * let faults queued again meanwhile hide it from the access that
	 * waits for it, for good.
	 */
	if (err && !f->write && f->want_write)
		err = sroce_odp_fault_mr(mr, start, end - start, false, how);
	if (err) {
		sroce_count(sdev, SROCE_CNT_ODP_FAULT_ERRORS);
	} else if (f->prefetch) {
		sroce_count(sdev, SROCE_CNT_ODP_PREFETCHES);
	} else {
		sroce_count(sdev, SROCE_CNT_ODP_FAULTS);
		atomic_long_inc(&mr->odp_faults);
	}
out:
	sroce_mr_unref(mr);
}

static void sroce_odp_work(struct work_struct *work)
{
	struct sroce_dev *sdev = container_of(work, struct sroce_dev,
					      odp.work);
	struct sroce_odp_queue *q = &sdev->odp;
	struct sroce_odp_fault *f;

	/* Bounded: SROCE_ODP_FAULT_MAX at a time, refilled by accesses. */
	for (;;) {
		spin_lock_bh(&q->lock);
		f = list_first_entry_or_null(&q->list, struct sroce_odp_fault,
					     list);
		if (f) {
			list_del(&f->list);
			q->len--;
		}
		spin_unlock_bh(&q->lock);
		if (!f)
			return;
		sroce_odp_do_fault(sdev, f);
		kfree(f);
		cond_resched();
	}
}

/**
 * sroce_odp_dev_init - set up the fault queue of a device
 * @sdev: the device being created
 */
void sroce_odp_dev_init(struct sroce_dev *sdev)
{
	spin_lock_init(&sdev->odp.lock);
	INIT_LIST_HEAD(&sdev->odp.list);
	INIT_WORK(&sdev->odp.work, sroce_odp_work);
}

/**
 * sroce_odp_set_caps - what a device tells of ODP (query_device)
 * @a: its attributes
 *
 * Explicit and implicit ODP MRs, for every operation of RC, UC and UD
 * that reaches memory through an MR.  6.1 and 6.12 name these alike
 * (IBK_ON_DEMAND_PAGING is a kernel_cap_flags bit on both).  max_mr_size
 * stays the limit of explicit MRs; an implicit one spans the user
 * address space whatever it is.
 */
void sroce_odp_set_caps(struct ib_device_attr *a)
{
	struct ib_odp_caps *caps = &a->odp_caps;

	a->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	caps->general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	caps->per_transport_caps.rc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC |
		IB_ODP_SUPPORT_SRQ_RECV;
	caps->per_transport_caps.uc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE;
	caps->per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV;
}

/**
 * sroce_odp_dev_destroy - stop the fault queue of a device going away
 * @sdev: the device; its MRs are deregistered
 */
void sroce_odp_dev_destroy(struct sroce_dev *sdev)
{
	struct sroce_odp_queue *q = &sdev->odp;
	struct sroce_odp_fault *f, *next;

	spin_lock_bh(&q->lock);
	q->dead = true;
	spin_unlock_bh(&q->lock);
	cancel_work_sync(&q->work);
	list_for_each_entry_safe(f, next, &q->list, list)
		kfree(f);
	INIT_LIST_HEAD(&q->list);
	q->len = 0;
}

/* ---------------------------------------------------- the data path */

/**
 * sroce_odp_missing - the data path found a page of @mr not mapped
 * @mr: from sroce_mr_lookup()
 * @uva: the page's user address
 * @end: the end of the access
 * @write: the access writes
 *
 * Any context.
 *
 * Return: the error a fault of the page left (taken), or -EAGAIN with a
 * fault asked for from @uva up to @end.
 */
int sroce_odp_missing(struct sroce_mr *mr, u64 uva, u64 end, bool write)
{
	unsigned long err_va = READ_ONCE(mr->odp_err_va);

	/*
	 * Only for a while: the access that asked comes back within its
	 * wait (an RNR timer is at most 655 ms); after that the memory may
	 * have been mapped again.
	 */
	if (err_va == (uva | 1) &&
	    cmpxchg(&mr->odp_err_va, err_va, 0) == err_va &&
	    time_before(jiffies, READ_ONCE(mr->odp_err_when) +
				 SROCE_ODP_ERR_KEEP))
		return -EFAULT;
	sroce_count(mr->sdev, SROCE_CNT_ODP_MISSES);
	sroce_odp_ask(mr, uva, end, write);
	return -EAGAIN;
}

/**
 * sroce_odp_ready - are the pages of an access to an ODP MR mapped?
 * @mr: an ODP MR from sroce_mr_lookup() (its lock held for reading)
 * @iova: the first address; the range has been checked
 * @len: bytes
 * @write: the access writes
 *
 * Any context; never sleeps.  Until sroce_mr_put() the pages stay.
 *
 * Return: 0; -EAGAIN if a page is not mapped (a fault is asked for); or
 * -EFAULT if a fault of the first such page failed (odp.h).
 */
int sroce_odp_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write)
{
	u64 uva = sroce_odp_uva(mr, iova);

	if (!len)
		return 0;
	if (sroce_mr_implicit(mr))
		return sroce_odp_imr_ready(mr, uva, len, write);
	return sroce_odp_umem_ready(mr, sroce_mr_odp(mr), uva, len, uva + len,
				    write);
}

/**
 * sroce_odp_umem_ready - are the pages of a range of an ODP umem mapped?
 * @mr: the MR, from sroce_mr_lookup()
 * @odp: its umem, or a child of it
 * @uva: the first user address, inside @odp
 * @len: bytes, not 0, inside @odp
 * @end: the end of the whole access (for the fault asked for)
 * @write: the access writes
 *
 * Return: as sroce_odp_ready().
 */
int sroce_odp_umem_ready(struct sroce_mr *mr, struct ib_umem_odp *odp,
			 u64 uva, u64 len, u64 end, bool write)
{
	u64 need = ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
	u64 start = ib_umem_start(odp);
	unsigned int shift = odp->page_shift;
	u64 i, last;

	last = (uva + len - 1 - start) >> shift;
	for (i = (uva - start) >> shift; i <= last; i++)
		if ((READ_ONCE(odp->dma_list[i]) & need) != need)
			return sroce_odp_missing(mr, start + (i << shift),
						 end, write);
	return 0;
}

/**
 * sroce_odp_va - the kernel address of ODP MR memory
 * @mr: an ODP MR from sroce_mr_lookup()
 * @iova: where; sroce_odp_ready() said its page is mapped
 * @len: bytes wanted
 * @n: how many of them (at most @len) are contiguous from there
 *
 * Return: the address (direct map, odp.h), or NULL if the page is not
 * mapped after all.
 */
void *sroce_odp_va(struct sroce_mr *mr, u64 iova, u32 len, u32 *n)
{
	u64 uva = sroce_odp_uva(mr, iova);

	if (sroce_mr_implicit(mr))
		return sroce_odp_imr_va(mr, uva, len, n);
	return sroce_odp_umem_va(sroce_mr_odp(mr), uva, len, n);
}

/**
 * sroce_odp_umem_va - the kernel address of memory of an ODP umem
 * @odp: an ODP MR's umem, or a child of it
 * @uva: the user address, inside @odp
 * @len: bytes wanted
 * @n: how many of them (at most @len) are contiguous from there
 *
 * Return: as sroce_odp_va().
 */
void *sroce_odp_umem_va(struct ib_umem_odp *odp, u64 uva, u32 len, u32 *n)
{
	u64 psize = BIT_ULL(odp->page_shift), off;
	dma_addr_t dma;

	off = uva - ib_umem_start(odp);
	dma = READ_ONCE(odp->dma_list[off >> odp->page_shift]);
	if (!(dma & ODP_READ_ALLOWED_BIT))
		return NULL;
	*n = min_t(u64, len, psize - (off & (psize - 1)));
	return ib_virt_dma_to_ptr((dma & ODP_DMA_ADDR_MASK) +
				  (off & (psize - 1)));
}

/* --------------------------------------------------------- advise_mr */

/* The ODP MR of @sge, referenced, checked for @pd and the range. */
static struct sroce_mr *sroce_advise_mr_get(struct sroce_dev *sdev,
					    struct ib_pd *ibpd,
					    const struct ib_sge *sge, bool write,
					    int *err)
{
	struct sroce_mr *mr = sroce_mr_get(sdev, sge->lkey);

	*err = -ENOENT;
	if (!mr)
		return NULL;
	if (READ_ONCE(mr->key) != sge->lkey || &mr->pd->ibpd != ibpd ||
	    !sroce_mr_is_odp(mr))
		goto fail;
	*err = -EFAULT;
	if (!sroce_range_ok(mr->iova, mr->length, sge->addr, sge->length))
		goto fail;
	*err = -EPERM;
	if (write && !(mr->access & IB_ACCESS_LOCAL_WRITE))
		goto fail;
	*err = 0;
	return mr;
fail:
	sroce_mr_unref(mr);
	return NULL;
}

/* Queue the prefetch of @sge of @mr for the work item. */
static int sroce_advise_async(struct sroce_mr *mr, const struct ib_sge *sge,
			      bool write, bool no_fault)
{
	struct sroce_odp_fault *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->key = mr->key;
	f->va = sroce_odp_uva(mr, sge->addr);
	f->len = sge->length;
	f->write = write;
	f->want_write = write;
	f->prefetch = true;
	f->no_fault = no_fault;
	sroce_odp_queue(mr->sdev, f);
	return 0;
}

/* Prefetch @sge of @mr now (IB_UVERBS_ADVISE_MR_FLAG_FLUSH). */
static int sroce_advise_sync(struct sroce_mr *mr, const struct ib_sge *sge,
			     bool write, bool no_fault)
{
	int err;

	err = sroce_odp_fault_mr(mr, sroce_odp_uva(mr, sge->addr),
				 sge->length, write,
				 no_fault ? 0 : SROCE_ODP_MAP_FAULT);
	sroce_count(mr->sdev, err ? SROCE_CNT_ODP_FAULT_ERRORS :
				    SROCE_CNT_ODP_PREFETCHES);
	return err ? -EFAULT : 0;
}

/**
 * sroce_advise_mr - ibv_advise_mr(): prefetch ranges of ODP MRs
 * @ibpd: the PD the MRs must belong to
 * @advice: PREFETCH (readable), PREFETCH_WRITE (writable) or
 *	PREFETCH_NO_FAULT (map what is present, fault nothing)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done before returning;
 *	otherwise queued for the fault work item
 * @sg_list: the ranges, by lkey
 * @num_sge: entries in @sg_list
 * @attrs: unused
 *
 * Process context.
 *
 * Return: 0; -ENOENT for an lkey that names no ODP MR of @ibpd; -EFAULT
 * for a range outside its MR, or (synchronous) memory that cannot be
 * faulted in; -EPERM to write an MR without local write; -EOPNOTSUPP
 * for another advice.
 */
int sroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool no_fault = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	int err = 0;
	u32 i;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH && !write &&
	    !no_fault)
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge && !err; i++) {
		struct sroce_mr *mr;

		mr = sroce_advise_mr_get(sdev, ibpd, &sg_list[i], write, &err);
		if (!mr)
			break;
		if (!sg_list[i].length) {
			sroce_mr_unref(mr);
			continue;
		}
		if (!(flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH)) {
			err = sroce_advise_async(mr, &sg_list[i], write,
						 no_fault);
		} else {
			err = sroce_advise_sync(mr, &sg_list[i], write,
						no_fault);
		}
		sroce_mr_unref(mr);
	}
	return err;
}

#else /* !CONFIG_INFINIBAND_ON_DEMAND_PAGING */

/*
 * A kernel without ib_umem_odp (the debug kernel may be built so): no
 * ODP caps, so the core refuses ODP registrations before sroce sees
 * them; the rest is never reached.
 */
void sroce_odp_dev_init(struct sroce_dev *sdev)
{
}

void sroce_odp_set_caps(struct ib_device_attr *a)
{
}

void sroce_odp_dev_destroy(struct sroce_dev *sdev)
{
}

struct ib_umem *sroce_odp_get(struct ib_device *ibdev, u64 start, u64 length,
			      int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

void sroce_odp_attach(struct sroce_mr *mr, struct ib_umem *umem)
{
}

void sroce_odp_umem_release(struct ib_umem *umem)
{
	ib_umem_release(umem);
}

u32 sroce_odp_mapped_pages(struct sroce_mr *mr)
{
	return 0;
}

int sroce_odp_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write)
{
	return -EFAULT;
}

void *sroce_odp_va(struct sroce_mr *mr, u64 iova, u32 len, u32 *n)
{
	return NULL;
}

int sroce_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	return -EOPNOTSUPP;
}

#endif /* CONFIG_INFINIBAND_ON_DEMAND_PAGING */
