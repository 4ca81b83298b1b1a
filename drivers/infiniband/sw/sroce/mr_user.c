// SPDX-License-Identifier: GPL-2.0-only
/*
 * User memory regions: memory pinned by reg_user_mr, ODP MRs (whose
 * pages odp.c follows), dma-buf MRs, and rereg_user_mr.  What every MR
 * shares (table, allocation, lookups) is in mr.c; see mr.h for the rules.
 */
#include <linux/dma-buf.h>
#include <linux/highmem.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "mr.h"
#include "mr_user.h"
#include "odp.h"

/* The pages of @umem, in order; *@npages of them. */
static int sroce_umem_pages(struct ib_umem *umem, struct page ***pages,
			    unsigned int *npages)
{
	unsigned int n = 0, max = ib_umem_num_pages(umem);
	struct sg_page_iter it;
	struct page **p;

	p = kvcalloc(max, sizeof(*p), SROCE_GFP_USER);
	if (!p)
		return -ENOMEM;

	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (n == max)
			break;
		p[n++] = sg_page_iter_page(&it);
	}
	if (WARN_ON_ONCE(n != max)) {
		kvfree(p);
		return -EFAULT;
	}
	*pages = p;
	*npages = n;
	return 0;
}

static int sroce_mr_fill_pages(struct sroce_mr *mr, struct ib_umem *umem)
{
	int err = sroce_umem_pages(umem, &mr->pages, &mr->npages);

	if (err)
		return err;
	mr->page_off = ib_umem_offset(umem);
	return 0;
}

/* The length and iova of a user MR: what reg and rereg accept. */
static bool sroce_user_range_ok(u64 length, u64 iova)
{
	return length && length <= SROCE_MAX_MR_SIZE &&
	       iova <= U64_MAX - length;
}

/* What a new user MR (dma-buf, ODP, implicit ODP: odp.h) may be given. */
static int sroce_user_mr_check(int access, u64 start, u64 length, u64 iova)
{
	int err = sroce_check_access(access, access & IB_ACCESS_ON_DEMAND ?
					     SROCE_ACCESS_ODP_MR :
					     SROCE_ACCESS_USER_MR);

	if (!err && !sroce_user_range_ok(length, iova) &&
	    !sroce_odp_implicit(access, start, length, iova))
		err = -EINVAL;
	return err;
}

/* A user MR whose pages are in place: its range, valid, published. */
static int sroce_user_mr_publish(struct sroce_mr *mr, u64 iova, u64 length)
{
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->state = SROCE_MR_VALID;
	return sroce_mr_publish(mr);
}

/*
 * An ODP MR: nothing pinned; the notifier excludes the MR's accesses from
 * the moment sroce_odp_attach() names the MR to it, so an error after
 * that removes the notifier (releases the umem) before the MR goes.
 */
static struct ib_mr *sroce_reg_odp_mr(struct ib_pd *ibpd, u64 start,
				      u64 length, u64 iova, int access)
{
	struct ib_umem *umem;
	struct sroce_mr *mr;
	int err;

	umem = sroce_odp_get(ibpd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	mr = sroce_mr_alloc(ibpd, IB_MR_TYPE_USER, access);
	if (IS_ERR(mr)) {
		sroce_odp_umem_release(umem);
		return ERR_CAST(mr);
	}
	sroce_odp_attach(mr, umem);
	err = sroce_user_mr_publish(mr, iova, length);
	if (err) {
		sroce_odp_umem_release(umem);
		mr->umem = NULL;
		mr->odp = false;
		sroce_mr_free_unpublished(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/*
 * @start is the user address of the memory, @iova the address the MR
 * gives its first byte (they may differ, also in their page offsets).
 */
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct ib_umem *umem;
	struct sroce_mr *mr;
	int err;

	err = sroce_user_mr_check(access, start, length, iova);
	if (err)
		return ERR_PTR(err);
	if (access & IB_ACCESS_ON_DEMAND)
		return sroce_reg_odp_mr(ibpd, start, length, iova, access);

	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);

	mr = sroce_mr_alloc(ibpd, IB_MR_TYPE_USER, access);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto err_umem;
	}
	err = sroce_mr_fill_pages(mr, umem);
	if (err)
		goto err_mr;
	mr->umem = umem;
	err = sroce_user_mr_publish(mr, iova, length);
	if (err)
		goto err_mr;
	return &mr->ibmr;

err_mr:
	sroce_mr_free_unpublished(mr);
err_umem:
	ib_umem_release(umem);
	return ERR_PTR(err);
}

/*
 * dma-buf MRs.  ib_umem_dmabuf_get() attaches the buffer to the device's
 * DMA device and maps it for that device; a software device has none (it
 * uses virt DMA), which is why rdma_rxe has no reg_user_mr_dmabuf.
 * sroce's data path is the CPU, so it asks the exporter for a kernel
 * mapping instead (dma_buf_vmap(), which also keeps a buffer that could
 * move where it is), holds a CPU access open for the life of the MR
 * (dma_buf_begin_cpu_access(): the exporter's cache maintenance; a no-op
 * on x86) and takes the pages behind the mapping: from then on the MR is
 * a user MR to the data path, zero-copy sends included.  That serves
 * exporters of system memory that have a vmap: udmabuf (memfd pages), the
 * GEM shmem and DMA helpers, GPU buffers placed in system memory.  Device
 * memory (an I/O mapping, or one without struct pages) and exporters
 * without vmap are refused with -EOPNOTSUPP.  No move notification is
 * needed: nothing moves a vmapped buffer.
 */
MODULE_IMPORT_NS(DMA_BUF);

/* The page behind @va of a dma-buf's kernel mapping, or NULL. */
static struct page *sroce_dmabuf_page(const void *va)
{
	if (is_vmalloc_addr(va))
		return vmalloc_to_page(va);
	if (virt_addr_valid(va))
		return virt_to_page(va);
	return NULL;
}

/* Take the buffer of @fd for @mr: referenced, in CPU access, vmapped. */
static int sroce_dmabuf_open(struct sroce_mr *mr, int fd, u64 offset,
			     u64 length)
{
	struct dma_buf *dmabuf;
	int err;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	if (offset > dmabuf->size || length > dmabuf->size - offset) {
		err = -EINVAL;
		goto err_put;
	}
	err = dma_buf_begin_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
	if (err)
		goto err_put;
	err = dma_buf_vmap_unlocked(dmabuf, &mr->dmabuf_map);
	if (!err && mr->dmabuf_map.is_iomem) {
		dma_buf_vunmap_unlocked(dmabuf, &mr->dmabuf_map);
		err = -EOPNOTSUPP;
	}
	if (err) {
		/* dma_buf_vmap() says -EINVAL for an exporter without vmap */
		err = err == -EINVAL ? -EOPNOTSUPP : err;
		goto err_end;
	}
	mr->dmabuf = dmabuf;
	return 0;

err_end:
	dma_buf_end_cpu_access(dmabuf, DMA_BIDIRECTIONAL);
err_put:
	dma_buf_put(dmabuf);
	return err;
}

/* Undo sroce_dmabuf_open(), if @mr is a dma-buf MR. */
static void sroce_dmabuf_close(struct sroce_mr *mr)
{
	if (!mr->dmabuf)
		return;
	dma_buf_vunmap_unlocked(mr->dmabuf, &mr->dmabuf_map);
	dma_buf_end_cpu_access(mr->dmabuf, DMA_BIDIRECTIONAL);
	dma_buf_put(mr->dmabuf);
	mr->dmabuf = NULL;
}

/* The pages behind [@offset, @offset + @length) of @mr's buffer. */
static int sroce_dmabuf_pages(struct sroce_mr *mr, u64 offset, u64 length)
{
	const u8 *base = (const u8 *)mr->dmabuf_map.vaddr +
			 (offset & PAGE_MASK);
	unsigned int i, n;

	n = DIV_ROUND_UP(offset_in_page(offset) + length, PAGE_SIZE);
	mr->pages = kvcalloc(n, sizeof(*mr->pages), SROCE_GFP_USER);
	if (!mr->pages)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		mr->pages[i] = sroce_dmabuf_page(base + (size_t)i * PAGE_SIZE);
		if (!mr->pages[i])
			return -EOPNOTSUPP;
		if (!(i % 4096))
			cond_resched();	/* up to 2^26 page table walks */
	}
	mr->npages = n;
	mr->page_off = offset_in_page(offset);
	return 0;
}

/* reg_user_mr_dmabuf: @length bytes of the dma-buf @fd from @offset. */
struct ib_mr *sroce_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
				       u64 length, u64 iova, int fd, int access,
				       SROCE_REG_DMABUF_ARG *arg)
{
	struct sroce_mr *mr;
	int err;

	err = sroce_user_mr_check(access, U64_MAX, length, iova);
	if (err)
		return ERR_PTR(err);

	mr = sroce_mr_alloc(ibpd, IB_MR_TYPE_USER, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = sroce_dmabuf_open(mr, fd, offset, length);
	if (!err)
		err = sroce_dmabuf_pages(mr, offset, length);
	if (!err)
		err = sroce_user_mr_publish(mr, iova, length);
	if (err) {
		sroce_dmabuf_close(mr);
		sroce_mr_free_unpublished(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/**
 * sroce_mr_user_release - let go of a deregistered MR's user memory
 * @mr: the MR, out of the table, its last access done
 *
 * Unpins (or, ODP, stops following) its pages and closes its dma-buf.
 */
void sroce_mr_user_release(struct sroce_mr *mr)
{
	sroce_odp_umem_release(mr->umem);
	mr->umem = NULL;
	sroce_dmabuf_close(mr);
}

/*
 * A user MR's registration as rereg_user_mr replaces it: everything
 * that can fail is done on this copy before the MR is touched, so a
 * failed rereg leaves the registration as it was.  After the swap it
 * holds the old memory, which is then released.
 */
struct sroce_mr_rereg {
	struct sroce_pd *pd;
	int access;
	struct ib_umem *umem;
	struct page **pages;
	unsigned int npages;
	unsigned int page_off;
	u64 iova;
	u64 length;
};

/* Pin the memory of IB_MR_REREG_TRANS into @r. */
static int sroce_rereg_pin(struct sroce_mr *mr, struct sroce_mr_rereg *r,
			   u64 start)
{
	int err;

	if (!sroce_user_range_ok(r->length, r->iova))
		return -EINVAL;
	r->umem = ib_umem_get(mr->ibmr.device, start, r->length, r->access);
	if (IS_ERR(r->umem)) {
		err = PTR_ERR(r->umem);
		r->umem = NULL;
		return err;
	}
	err = sroce_umem_pages(r->umem, &r->pages, &r->npages);
	if (err)
		return err;
	r->page_off = ib_umem_offset(r->umem);
	return 0;
}

/* Check the rereg and prepare what it sets in @r. */
static int sroce_rereg_prepare(struct sroce_mr *mr, struct sroce_mr_rereg *r,
			       int flags, u64 start, u64 length, u64 iova,
			       int access, struct ib_pd *ibpd)
{
	int err;

	/*
	 * Only memory pinned by reg_user_mr can be pinned anew (not a
	 * dma-buf); an ODP MR is not reregistered either.
	 */
	if (mr->type != IB_MR_TYPE_USER || !mr->umem || sroce_mr_is_odp(mr))
		return -EOPNOTSUPP;
	if (flags & ~IB_MR_REREG_SUPPORTED)
		return -EOPNOTSUPP;

	r->pd = mr->pd;
	if (flags & IB_MR_REREG_PD)
		r->pd = container_of(ibpd, struct sroce_pd, ibpd);
	r->access = mr->access;
	if (flags & IB_MR_REREG_ACCESS) {
		err = sroce_check_access(access, SROCE_ACCESS_USER_MR);
		if (err)
			return err;
		r->access = access;
	}
	if (flags & IB_MR_REREG_TRANS) {
		r->iova = iova;
		r->length = length;
		return sroce_rereg_pin(mr, r, start);
	}
	/*
	 * The pages stay: they were pinned for reading only if the MR
	 * was not writable then (ib_umem_check_rereg() of 6.12 says so too).
	 */
	if (ib_access_writable(r->access) && !mr->umem->writable)
		return -EACCES;
	return 0;
}

/* Put @r in place, and the registration it replaces into @r. */
static int sroce_rereg_swap(struct sroce_mr *mr, struct sroce_mr_rereg *r)
{
	int err = 0;

	/* Waits for the accesses under way; later ones see @r whole. */
	write_lock_bh(&mr->lock);
	if (mr->nr_mw) {
		err = -EBUSY;	/* as dereg_mr: its windows would dangle */
	} else {
		mr->pd = r->pd;
		mr->access = r->access;
		if (r->umem) {
			swap(mr->umem, r->umem);
			swap(mr->pages, r->pages);
			swap(mr->npages, r->npages);
			swap(mr->page_off, r->page_off);
			swap(mr->iova, r->iova);
			swap(mr->length, r->length);
		}
	}
	write_unlock_bh(&mr->lock);
	return err;
}

/*
 * rereg_user_mr: IB_MR_REREG_TRANS (new memory and iova), _PD and
 * _ACCESS, any mix, on the MR in place.  The keys stay (the verbs'
 * Reregister Memory Region keeps the MR and its handle; returning NULL
 * tells the core the ib_mr is still the one).  The core has checked the
 * flags, the access for the device, that @start and @iova share their
 * page offset, and holds the MR's handle exclusively: neither dereg nor
 * another rereg runs meanwhile.
 */
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);
	struct sroce_mr_rereg r = {};
	int err;

	err = sroce_rereg_prepare(mr, &r, flags, start, length, iova, access,
				  ibpd);
	if (!err)
		err = sroce_rereg_swap(mr, &r);
	if (!err && (flags & IB_MR_REREG_TRANS)) {
		/* The core sets them too; so they are right on any kernel. */
		ibmr->iova = iova;
		ibmr->length = length;
	}
	/* The old memory, or the new one if the rereg failed. */
	ib_umem_release(r.umem);
	kvfree(r.pages);
	return err ? ERR_PTR(err) : NULL;
}
