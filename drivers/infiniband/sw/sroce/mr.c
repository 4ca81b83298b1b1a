// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory regions: the key table, the MR verbs, fast registration and
 * invalidation, and the checked lookups the data path starts from.  The
 * rules (keys, lifetime, contexts, error codes) are in mr.h; the copies
 * and atomics on MR memory are in mem.c.
 */
#include <linux/dma-buf.h>
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <kunit/visibility.h>

#include "sroce.h"
#include "mr.h"

/*
 * The access flags each kind of MR may be given.  MW_BIND lets memory
 * windows be bound to the MR (mw.c); the IB_ACCESS_OPTIONAL bits are
 * hints a device may ignore.  FLUSH_GLOBAL is in SROCE_ACCESS_REMOTE.
 * ON_DEMAND makes a user MR an ODP MR (odp.h).  Zero-based MRs and
 * FLUSH_PERSISTENT (sroce does not tell persistent memory apart) are not
 * supported.
 */
#define SROCE_ACCESS_USER_MR	(IB_ACCESS_LOCAL_WRITE | SROCE_ACCESS_REMOTE | \
				 IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB | \
				 IB_ACCESS_OPTIONAL)
#define SROCE_ACCESS_ODP_MR	(SROCE_ACCESS_USER_MR | IB_ACCESS_ON_DEMAND)
#define SROCE_ACCESS_FAST_REG	(IB_ACCESS_LOCAL_WRITE | SROCE_ACCESS_REMOTE | \
				 IB_ACCESS_MW_BIND | IB_ACCESS_OPTIONAL)
#define SROCE_ACCESS_DMA_MR	(IB_ACCESS_LOCAL_WRITE | SROCE_ACCESS_REMOTE)

/* How long dereg_mr waits for the data path before it complains. */
#define SROCE_MR_DEREG_WARN	(10 * HZ)

static int sroce_check_access(int access, int supported)
{
	if (access & ~supported)
		return -EOPNOTSUPP;
	/* As ib_check_mr_access(): remote writes need local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/**
 * sroce_mr_table_init - set up an empty key table
 * @table: the table, in the device
 *
 * Call before anything can fail in device creation: destroy expects an
 * initialized table.
 */
void sroce_mr_table_init(struct sroce_mr_table *table)
{
	BUILD_BUG_ON(SROCE_MAX_MR > 0xffffff);
	xa_init_flags(&table->xa, XA_FLAGS_ALLOC1);
	table->next = 1;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_table_init);

/**
 * sroce_mr_table_destroy - free the key table of a device
 * @table: the table; every MR has been deregistered
 */
void sroce_mr_table_destroy(struct sroce_mr_table *table)
{
	WARN_ON(!xa_empty(&table->xa));
	xa_destroy(&table->xa);
}

/*
 * A new MR with an index reserved in the table.  Lookups do not see it
 * until sroce_mr_publish(); until then sroce_mr_free_unpublished() undoes
 * everything.
 */
static struct sroce_mr *sroce_mr_alloc(struct ib_pd *ibpd,
				       enum ib_mr_type type, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	u32 index;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	err = xa_alloc_cyclic(&sdev->mr_table.xa, &index, NULL,
			      XA_LIMIT(1, SROCE_MAX_MR), &sdev->mr_table.next,
			      GFP_KERNEL);
	if (err < 0) {
		kfree(mr);
		/* A full table is the user running out of MRs. */
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}

	mr->sdev = sdev;
	mr->pd = container_of(ibpd, struct sroce_pd, ibpd);
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	rwlock_init(&mr->lock);
	mr->type = type;
	mr->access = access;
	mr->index = index;
	mr->key = index << 8 | get_random_u8();
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	return mr;
}

/* Make a fully set up MR visible to lookups (xa_store orders the stores). */
static int sroce_mr_publish(struct sroce_mr *mr)
{
	return xa_err(xa_store(&mr->sdev->mr_table.xa, mr->index, mr,
			       GFP_KERNEL));
}

static void sroce_dmabuf_close(struct sroce_mr *mr);

static void sroce_mr_free_unpublished(struct sroce_mr *mr)
{
	xa_erase(&mr->sdev->mr_table.xa, mr->index);
	sroce_dmabuf_close(mr);
	kvfree(mr->pages);
	kfree(mr->blocks);
	kfree(mr->map_blocks);
	kfree(mr);
}

static struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_mr *mr;
	int err;

	/* It reaches all kernel memory: never for a user PD. */
	if (ibpd->uobject)
		return ERR_PTR(-EINVAL);
	err = sroce_check_access(access, SROCE_ACCESS_DMA_MR);
	if (err)
		return ERR_PTR(err);

	mr = sroce_mr_alloc(ibpd, IB_MR_TYPE_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->state = SROCE_MR_VALID;

	err = sroce_mr_publish(mr);
	if (err) {
		sroce_mr_free_unpublished(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

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
static struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start,
				       u64 length, u64 iova, int access,
				       struct ib_udata *udata)
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
static struct ib_mr *sroce_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
					      u64 length, u64 iova, int fd,
					      int access,
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
		sroce_mr_free_unpublished(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
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
static struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags,
					 u64 start, u64 length, u64 iova,
					 int access, struct ib_pd *ibpd,
					 struct ib_udata *udata)
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

static struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				    u32 max_num_sg)
{
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg ||
	    max_num_sg > SROCE_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);

	mr = sroce_mr_alloc(ibpd, IB_MR_TYPE_MEM_REG, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->blocks = kcalloc(max_num_sg, sizeof(*mr->blocks), GFP_KERNEL);
	mr->map_blocks = kcalloc(max_num_sg, sizeof(*mr->map_blocks),
				 GFP_KERNEL);
	if (!mr->blocks || !mr->map_blocks) {
		err = -ENOMEM;
		goto err_mr;
	}
	mr->max_blocks = max_num_sg;
	mr->block_shift = PAGE_SHIFT;
	mr->map_shift = PAGE_SHIFT;
	mr->state = SROCE_MR_FREE;

	err = sroce_mr_publish(mr);
	if (err)
		goto err_mr;
	return &mr->ibmr;

err_mr:
	sroce_mr_free_unpublished(mr);
	return ERR_PTR(err);
}

/* ib_sg_to_pages() callback: @addr is a kernel address (virt DMA). */
static int sroce_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->map_nblocks >= mr->max_blocks)
		return -ENOMEM;
	mr->map_blocks[mr->map_nblocks++] = addr;
	return 0;
}

/*
 * The core has put the block size in ibmr->page_size: any power of two
 * from 4 KiB to 2 GiB (SROCE_PAGE_SIZE_CAP).  ib_sg_to_pages() sets
 * ibmr->iova and ibmr->length; the new list takes effect at the next
 * IB_WR_REG_MR (sroce_mr_fast_reg()).
 */
static int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sgl,
			   int sg_nents, unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	u32 page_size = ibmr->page_size;
	int n;

	if (mr->type != IB_MR_TYPE_MEM_REG || !is_power_of_2(page_size) ||
	    !(page_size & SROCE_PAGE_SIZE_CAP))
		return -EINVAL;

	mr->map_nblocks = 0;
	n = ib_sg_to_pages(ibmr, sgl, sg_nents, sg_offset, sroce_set_page);
	mr->map_shift = ilog2(page_size);
	mr->map_first_off = ibmr->iova & (page_size - 1);
	return n;
}

/*
 * Erase the key, then wait for the lookups that hold the MR (see the
 * lifetime rule in mr.h) before unpinning its memory.  Lookups that
 * found the MR in the table just before the erase fail their
 * refcount_inc_not_zero(); the RCU grace period before the free covers
 * them.
 */
static int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int err = 0;

	/* As rdma_rxe: not while windows are bound to it. */
	write_lock_bh(&mr->lock);
	if (mr->nr_mw)
		err = -EBUSY;
	else
		mr->dying = true;
	write_unlock_bh(&mr->lock);
	if (err)
		return err;

	xa_erase(&mr->sdev->mr_table.xa, mr->index);
	sroce_mr_unref(mr);
	while (!wait_for_completion_timeout(&mr->released,
					    SROCE_MR_DEREG_WARN))
		ibdev_warn(&mr->sdev->ibdev,
			   "MR %#x still in use; waiting\n", mr->ibmr.lkey);

	sroce_odp_umem_release(mr->umem);
	sroce_dmabuf_close(mr);
	kvfree(mr->pages);
	kfree(mr->blocks);
	kfree(mr->map_blocks);
	kfree_rcu(mr, rcu);
	return 0;
}

/**
 * sroce_mr_fast_reg - carry out an IB_WR_REG_MR
 * @mr: to_smr(reg_wr->mr); the poster holds it until the WR completes
 * @pd: the PD of the QP the WR was posted on
 * @key: reg_wr->key, the new lkey == rkey; only its low byte may differ
 * @access: reg_wr->access
 *
 * Registers the page list of the last map_mr_sg with the iova and length
 * it set in @mr->ibmr.  Any context.
 *
 * Return: 0; -EINVAL if @mr is not a fast-reg MR, @key names another
 * index, @access is inconsistent or the length exceeds the mapped
 * blocks; -EOPNOTSUPP for unsupported access flags; -EPERM for another
 * PD; -EBUSY if @mr is valid already.  The WR then completes with
 * IB_WC_LOC_QP_OP_ERR.
 */
int sroce_mr_fast_reg(struct sroce_mr *mr, struct sroce_pd *pd, u32 key,
		      int access)
{
	u64 mapped;
	int err;

	if (mr->type != IB_MR_TYPE_MEM_REG || key >> 8 != mr->index)
		return -EINVAL;
	if (mr->pd != pd)
		return -EPERM;
	err = sroce_check_access(access, SROCE_ACCESS_FAST_REG);
	if (err)
		return err;
	mapped = (u64)mr->map_nblocks << mr->map_shift;
	if (mr->map_first_off > mapped ||
	    mr->ibmr.length > mapped - mr->map_first_off)
		return -EINVAL;

	write_lock_bh(&mr->lock);
	if (mr->state == SROCE_MR_VALID) {
		err = -EBUSY;
	} else {
		memcpy(mr->blocks, mr->map_blocks,
		       mr->map_nblocks * sizeof(*mr->blocks));
		WRITE_ONCE(mr->key, key);
		WRITE_ONCE(mr->access, access);
		WRITE_ONCE(mr->iova, mr->ibmr.iova);
		WRITE_ONCE(mr->length, mr->ibmr.length);
		WRITE_ONCE(mr->nblocks, mr->map_nblocks);
		WRITE_ONCE(mr->block_shift, mr->map_shift);
		WRITE_ONCE(mr->first_off, mr->map_first_off);
		WRITE_ONCE(mr->state, SROCE_MR_VALID);
	}
	write_unlock_bh(&mr->lock);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_fast_reg);

/*
 * The MR with @key's index, referenced; NULL if there is none.  The key
 * byte is not checked: the caller does, under the lock if it needs one.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_table.xa, key >> 8);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * sroce_mr_invalidate - carry out a local or remote invalidation
 * @sdev: the device
 * @pd: the PD of the QP that invalidates (requester for IB_WR_LOCAL_INV,
 *	responder for SEND_WITH_INV)
 * @key: the rkey to invalidate
 * @remote: the peer asked (SEND_WITH_INV): only a key the peer could use,
 *	an rkey (the MR grants a remote right), may be invalidated so
 *
 * Makes a fast-reg MR free again, once the accesses to it under way are
 * done.  An MR that is free already stays free: the verbs allow
 * invalidating an invalid key.  Not in hard interrupt context.
 *
 * Return: 0; -ENOKEY if no MR has @key; -EINVAL if it is not a fast-reg
 * MR; -EPERM if it belongs to another PD; -EACCES for a remote one
 * without a remote right; -EBUSY while windows are bound to it.  Local invalidation then
 * completes with IB_WC_LOC_QP_OP_ERR; a remote one is a NAK (invalid
 * request) and IB_WC_REM_INV_REQ_ERR on the responder.
 */
int sroce_mr_invalidate(struct sroce_dev *sdev, struct sroce_pd *pd, u32 key,
			bool remote)
{
	struct sroce_mr *mr;
	int err = 0;

	mr = sroce_mr_get(sdev, key);
	if (!mr)
		return -ENOKEY;

	if (mr->type != IB_MR_TYPE_MEM_REG) {
		sroce_mr_unref(mr);
		return -EINVAL;
	}
	/* Waits for the accesses under way (see mr->lock). */
	write_lock_bh(&mr->lock);
	if (mr->key != key)
		err = -ENOKEY;
	else if (mr->pd != pd)
		err = -EPERM;
	else if (remote && !(mr->access & SROCE_ACCESS_REMOTE))
		err = -EACCES;
	else if (mr->nr_mw)
		err = -EBUSY;	/* as rdma_rxe: its windows would dangle */
	else
		WRITE_ONCE(mr->state, SROCE_MR_FREE);
	write_unlock_bh(&mr->lock);

	sroce_mr_unref(mr);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_invalidate);

static int sroce_mr_check(struct sroce_mr *mr, struct sroce_pd *pd, u32 key,
			  int access, u64 iova, u64 length)
{
	if (mr->key != key)
		return -ENOKEY;
	if (mr->state != SROCE_MR_VALID)
		return -EKEYREVOKED;
	if (mr->pd != pd)
		return -EPERM;
	if (access & ~mr->access)
		return -EACCES;
	/* Only a FLUSH may reach the whole MR, whatever its RETH says. */
	if ((length != SROCE_MR_WHOLE || !(access & SROCE_ACCESS_FLUSH)) &&
	    !sroce_range_ok(mr->iova, mr->length, iova, length))
		return -ERANGE;
	return 0;
}

/**
 * sroce_mr_lookup - find an MR by key and check an access to it
 * @sdev: the device
 * @pd: the PD of the QP doing the access: the requester's for its own
 *	SGEs, the responder's for the peer's RDMA and atomic requests
 * @key: the lkey or rkey, all 32 bits of it
 * @remote: the access is for the peer; @access must then ask for a
 *	remote right
 * @access: the rights needed: 0 to read local memory,
 *	IB_ACCESS_LOCAL_WRITE to write it, IB_ACCESS_REMOTE_READ/WRITE/ATOMIC
 * @iova: the first address accessed
 * @length: the number of bytes; 0 checks that @iova is inside the MR or
 *	just past its end (callers skip the lookup when IBA says a
 *	zero-length access ignores the key); SROCE_MR_WHOLE with a flush
 *	right in @access checks no range (a FLUSH of the whole MR)
 * @err: 0 or the reason of the failure (see mr.h)
 *
 * Any context.  The caller drops the reference with sroce_mr_put().
 *
 * Return: the MR, referenced, or NULL.
 */
struct sroce_mr *sroce_mr_lookup(struct sroce_dev *sdev, struct sroce_pd *pd,
				 u32 key, bool remote, int access, u64 iova,
				 u64 length, int *err)
{
	struct sroce_mr *mr;
	int ret;

	if (remote && !(access & SROCE_ACCESS_REMOTE)) {
		*err = -EACCES;
		return NULL;
	}

	mr = sroce_mr_get(sdev, key);
	if (!mr) {
		*err = -ENOKEY;
		return NULL;
	}

	/*
	 * A fast-reg MR, or an MR with windows, changes: hold it till the
	 * put.  (sparse cannot follow a lock held across functions; the
	 * put says so too.)
	 */
	if (sroce_mr_locked(mr)) {
		read_lock_bh(&mr->lock);
		__release(&mr->lock);
	}
	ret = sroce_mr_check(mr, pd, key, access, iova, length);
	*err = ret;
	if (ret) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_mr_lookup);

static const struct ib_device_ops sroce_mr_ops = {
	.alloc_mr = sroce_alloc_mr,
	.dereg_mr = sroce_dereg_mr,
	.get_dma_mr = sroce_get_dma_mr,
	.map_mr_sg = sroce_map_mr_sg,
	.reg_user_mr = sroce_reg_user_mr,
	.advise_mr = sroce_advise_mr,
	.reg_user_mr_dmabuf = sroce_reg_user_mr_dmabuf,
	.rereg_user_mr = sroce_rereg_user_mr,
};

/* Install the MR verbs; called while the device is set up. */
void sroce_mr_set_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &sroce_mr_ops);
}

