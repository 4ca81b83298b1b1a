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
 * The entry owns the ring's memory (vmalloc'ed, charged to the user's
 * memory cgroup); the object holds the entry's one long-lived reference,
 * dropped when it is destroyed, which also forbids new mappings, and the
 * mmap_free op frees the memory after it.  A mapping holds the pages, not
 * the entry: sroce_mmap() inserts each page into the VMA, which takes a
 * reference on it, so a page freed by vfree() stays until the last
 * mapping of it goes.  The driver never writes to freed memory, and
 * userspace never sees memory reused while it still has it mapped.
 *
 * The VMAs have no operations of ours.  That matters when the device goes
 * away under a program (disassociate_ucontext): the program's mappings
 * outlive its objects, the device and even this module, and nothing in
 * them may call back into sroce.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <sroce/compat.h>

#include "mmap.h"
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

/*
 * Insert the ring's pages into the VMA one by one (see the top of this
 * file); the core checked that the VMA is exactly the ring's size.
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
	int err;

	/* Checks VM_SHARED and the size; the reference keeps the ring. */
	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry)
		return -EINVAL;
	err = sroce_mmap_pages(vma, to_sroce_mmap_entry(rdma_entry)->buf);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}
