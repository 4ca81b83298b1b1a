// SPDX-License-Identifier: GPL-2.0-only
/*
 * Mapping user rings into userspace.
 *
 * Each user ring gets an entry in its user context's mmap table (the
 * core's rdma_user_mmap_entry API), which hands out the offset librxe
 * passes to mmap() and looks it up again safely: a lookup takes a
 * reference only if the entry is neither dying nor removed, under the
 * table's lock, so mmap() racing with the destruction of the object
 * finds either a live entry or nothing.
 *
 * The entry owns the ring's memory.  The object holds one reference,
 * dropped when it is destroyed (which also forbids new mappings), and
 * every VMA holds one, dropped when it is unmapped; the memory is freed
 * by the mmap_free op after the last of them.  So the driver never
 * writes to freed memory, and userspace never sees memory reused while
 * it still has the ring mapped.
 *
 * The core's own VMA operations only track IO mappings that it maps
 * itself (rdma_user_mmap_io()), so we install ours to hold the entry.
 * A VMA keeps the uverbs file, hence the user context and its mmap
 * table, alive until it is closed.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <sroce/compat.h>

#include "queue.h"

/**
 * struct sroce_mmap_entry - one mappable ring
 * @rdma_entry: the core's entry; its kref is the lifetime of @buf
 * @buf: the ring, from __vmalloc()
 */
struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void *buf;
};

static struct sroce_mmap_entry *
to_sroce_mmap_entry(struct rdma_user_mmap_entry *rdma_entry)
{
	return container_of(rdma_entry, struct sroce_mmap_entry, rdma_entry);
}

/**
 * sroce_mmap_entry_create - make a ring mappable by a user context
 * @uctx: the user context
 * @buf: the ring, from __vmalloc()
 * @size: its size, a multiple of PAGE_SIZE
 *
 * On success the entry owns @buf; on failure the caller still does.
 *
 * Context: process context, may sleep.
 * Return: the entry, or an ERR_PTR().
 */
struct sroce_mmap_entry *sroce_mmap_entry_create(struct ib_ucontext *uctx,
						 void *buf, size_t size)
{
	struct sroce_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->buf = buf;
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma_entry, size);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	return entry;
}

/**
 * sroce_mmap_entry_remove - drop the object's hold on a ring
 * @entry: the entry
 *
 * No new mapping can be made; the memory goes when the last existing
 * mapping does.
 *
 * Context: process context.
 */
void sroce_mmap_entry_remove(struct sroce_mmap_entry *entry)
{
	rdma_user_mmap_entry_remove(&entry->rdma_entry);
}

/* The byte offset userspace passes to mmap(). */
u64 sroce_mmap_entry_offset(const struct sroce_mmap_entry *entry)
{
	return rdma_user_mmap_get_offset(&entry->rdma_entry);
}

/* The mmap_free op: the last reference to an entry is gone. */
void sroce_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct sroce_mmap_entry *entry = to_sroce_mmap_entry(rdma_entry);

	vfree(entry->buf);
	kfree(entry);
}

/* A VMA was split or copied (fork): the new one holds a reference too. */
static void sroce_vma_open(struct vm_area_struct *vma)
{
	struct sroce_mmap_entry *entry = vma->vm_private_data;

	kref_get(&entry->rdma_entry.ref);
}

static void sroce_vma_close(struct vm_area_struct *vma)
{
	struct sroce_mmap_entry *entry = vma->vm_private_data;

	rdma_user_mmap_entry_put(&entry->rdma_entry);
}

static const struct vm_operations_struct sroce_vm_ops = {
	.open = sroce_vma_open,
	.close = sroce_vma_close,
};

/*
 * Map the ring's pages one by one: it comes from __vmalloc() (charged to
 * the user's memory cgroup), not vmalloc_user(), so remap_vmalloc_range()
 * would refuse it.  The core checked that the VMA is exactly its size.
 */
static int sroce_mmap_pages(struct vm_area_struct *vma, void *buf)
{
	unsigned long off;
	int err;

	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(buf + off));
		if (err)
			return err;
	}
	return 0;
}

/**
 * sroce_mmap - the mmap op: map a ring at the offset create returned
 * @uctx: the user context of the uverbs file being mapped
 * @vma: the new mapping; must be shared and exactly the ring's size
 *
 * Context: process context (the core's mmap handler), may sleep.
 * Return: 0, -EINVAL for an unknown offset, a wrong size or a private
 * mapping, or the error from vm_insert_page().
 */
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct sroce_mmap_entry *entry;
	int err;

	/* Checks VM_SHARED and the size, and takes a reference. */
	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = to_sroce_mmap_entry(rdma_entry);

	err = sroce_mmap_pages(vma, entry->buf);
	if (err) {
		rdma_user_mmap_entry_put(rdma_entry);
		return err;
	}

	/* The reference taken above now belongs to the VMA. */
	vma->vm_ops = &sroce_vm_ops;
	vma->vm_private_data = entry;
	return 0;
}
