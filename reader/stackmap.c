/* stackmap.c: a parsed stackmap (parse.c makes one): what a reader asks of it, the edits the
 * loaders make to it (function addresses and names from symbols or memory, instruction
 * offsets from relocations, a load bias, a merge of two), and ykllvm's dialects. */
#include <stdlib.h>

#include "internal.h"

/* -- Accessors -- */

const char *jitmap_loc_kind_name(jitmap_loc_kind kind)
{
	switch (kind) {
	case JITMAP_LOC_REGISTER: return "register";
	case JITMAP_LOC_DIRECT: return "direct";
	case JITMAP_LOC_INDIRECT: return "indirect";
	case JITMAP_LOC_CONSTANT: return "constant";
	case JITMAP_LOC_CONSTANT_INDEX: return "constant_index";
	default: return "unknown";
	}
}

jitmap_byte_order jitmap_stackmap_byte_order(const jitmap_stackmap *sm) { return sm->order; }
jitmap_arch jitmap_stackmap_arch(const jitmap_stackmap *sm) { return sm->arch; }
size_t jitmap_stackmap_num_blobs(const jitmap_stackmap *sm) { return sm->num_blobs; }
size_t jitmap_stackmap_num_functions(const jitmap_stackmap *sm) { return sm->num_functions; }
size_t jitmap_stackmap_num_records(const jitmap_stackmap *sm) { return sm->num_records; }

size_t jitmap_stackmap_num_records_with_pc(const jitmap_stackmap *sm)
{
	size_t n = 0;
	for (size_t i = 0; i < sm->num_records; i++)
		n += sm->records[i].function != JITMAP_NO_FUNCTION;
	return n;
}
size_t jitmap_stackmap_num_constants(const jitmap_stackmap *sm) { return sm->num_constants; }

const jitmap_blob *jitmap_stackmap_blob(const jitmap_stackmap *sm, size_t i)
{
	return i < sm->num_blobs ? &sm->blobs[i] : NULL;
}

const jitmap_function *jitmap_stackmap_function(const jitmap_stackmap *sm, size_t i)
{
	return i < sm->num_functions ? &sm->functions[i] : NULL;
}

const jitmap_record *jitmap_stackmap_record(const jitmap_stackmap *sm, size_t i)
{
	return i < sm->num_records ? &sm->records[i] : NULL;
}

int jitmap_stackmap_constant(const jitmap_stackmap *sm, size_t i, uint64_t *value)
{
	if (i >= sm->num_constants)
		return -ERANGE;
	*value = sm->constants[i];
	return 0;
}

const jitmap_function *jitmap_record_function(const jitmap_stackmap *sm,
					      const jitmap_record *rec)
{
	return rec->function < sm->num_functions ? &sm->functions[rec->function] : NULL;
}

uint64_t jitmap_record_pc(const jitmap_stackmap *sm, const jitmap_record *rec)
{
	const jitmap_function *f = jitmap_record_function(sm, rec);
	return (f ? f->address : 0) + rec->instruction_offset;
}

int jitmap_location_constant(const jitmap_stackmap *sm, const jitmap_record *rec,
			     const jitmap_location *loc, uint64_t *value)
{
	if (loc->kind == JITMAP_LOC_CONSTANT) {
		*value = (uint64_t)(int64_t)loc->offset;
		return 0;
	}
	if (loc->kind != JITMAP_LOC_CONSTANT_INDEX || rec->blob >= sm->num_blobs)
		return -EINVAL;
	const jitmap_blob *b = &sm->blobs[rec->blob];
	if (loc->offset < 0 || (uint32_t)loc->offset >= b->num_constants)
		return -ERANGE;
	*value = sm->constants[b->first_constant + (uint32_t)loc->offset];
	return 0;
}

int jitmap_stackmap_set_function_address(jitmap_stackmap *sm, uint64_t section_offset,
					 uint64_t address)
{
	/* Functions are in section order: binary search on their field offsets. */
	const size_t lo = JITMAP_LOWER_BOUND(sm->functions, sm->num_functions, section_offset,
					     section_offset);
	if (lo == sm->num_functions || sm->functions[lo].section_offset != section_offset)
		return -ENOENT;
	sm->functions[lo].address = address;
	sm->index_dirty = 1;
	sm->generation++;
	return 0;
}

int jitmap_stackmap_set_instruction_offset(jitmap_stackmap *sm, uint64_t field_offset,
					   uint32_t value)
{
	/* Records are in section order; the field is 8 bytes into the record. */
	const size_t lo = JITMAP_PARTITION_POINT(sm->num_records, i,
						 sm->records[i].section_offset + 8 < field_offset);
	if (lo == sm->num_records || sm->records[lo].section_offset + 8 != field_offset)
		return -ENOENT;
	sm->records[lo].instruction_offset = value;
	sm->index_dirty = 1;
	sm->generation++;
	return 0;
}

void jitmap_stackmap_add_bias(jitmap_stackmap *sm, uint64_t bias)
{
	for (size_t i = 0; i < sm->num_functions; i++)
		sm->functions[i].address += bias;
	sm->index_dirty = 1;
	sm->generation++;
}

int jitmap_stackmap_set_function_name(jitmap_stackmap *sm, size_t i, const char *name)
{
	if (i >= sm->num_functions)
		return -ERANGE;
	char *copy = name ? strdup(name) : NULL;
	if (name && !copy)
		return -ENOMEM;
	free(sm->names[i]);
	sm->names[i] = copy;
	sm->functions[i].name = copy;
	return 0;
}

int jitmap_stackmap_set_function_size(jitmap_stackmap *sm, size_t i, uint64_t size)
{
	if (i >= sm->num_functions)
		return -ERANGE;
	sm->sizes[i] = size;
	return 0;
}

uint64_t jitmap_stackmap_function_size(const jitmap_stackmap *sm, size_t i)
{
	return i < sm->num_functions ? sm->sizes[i] : 0;
}

int jitmap_stackmap_merge(jitmap_stackmap *sm, const jitmap_stackmap *from)
{
	if (sm->num_functions != from->num_functions)
		return -EINVAL;
	for (size_t i = 0; i < sm->num_functions; i++)
		if (sm->functions[i].section_offset != from->functions[i].section_offset)
			return -EINVAL;
	int filled = 0;
	for (size_t i = 0; i < sm->num_functions; i++) {
		const jitmap_function *f = &from->functions[i];
		if (!sm->functions[i].name && f->name &&
		    jitmap_stackmap_set_function_name(sm, i, f->name))
			return -ENOMEM;
		if (!sm->sizes[i])
			sm->sizes[i] = from->sizes[i];
		if (!sm->functions[i].address && f->address) {
			sm->functions[i].address = f->address;
			filled++;
		}
	}
	if (filled) {
		sm->index_dirty = 1;
		sm->generation++;
	}
	return filled;
}

/* -- Dialects -- */

const char *jitmap_dialect_name(jitmap_dialect d)
{
	switch (d) {
	case JITMAP_DIALECT_LLVM: return "llvm";
	case JITMAP_DIALECT_YK: return "ykllvm";
	case JITMAP_DIALECT_YK_EXTRAS: return "ykllvm-extras";
	}
	return NULL;
}

jitmap_dialect jitmap_blob_dialect(const jitmap_stackmap *sm, size_t i)
{
	return i < sm->num_blobs ? (jitmap_dialect)sm->blob_dialects[i] : JITMAP_DIALECT_LLVM;
}

/* The record's index in `sm`, or SIZE_MAX for a record of another stackmap. */
static size_t record_index(const jitmap_stackmap *sm, const jitmap_record *rec)
{
	if (rec < sm->records || rec >= sm->records + sm->num_records)
		return SIZE_MAX;
	return (size_t)(rec - sm->records);
}

size_t jitmap_record_num_live_vars(const jitmap_stackmap *sm, const jitmap_record *rec)
{
	const size_t r = record_index(sm, rec);
	if (r == SIZE_MAX)
		return 0;
	if (jitmap_blob_dialect(sm, rec->blob) == JITMAP_DIALECT_LLVM)
		return rec->num_locations;
	return sm->record_vars ? sm->record_vars[r].num : 0;
}

int jitmap_record_live_var(const jitmap_stackmap *sm, const jitmap_record *rec, size_t i,
			   uint16_t *first_location, uint16_t *num_locations)
{
	if (i >= jitmap_record_num_live_vars(sm, rec))
		return -ERANGE;
	if (jitmap_blob_dialect(sm, rec->blob) == JITMAP_DIALECT_LLVM) {
		*first_location = (uint16_t)i;
		*num_locations = 1;
		return 0;
	}
	const struct jitmap__live_var *v =
		&sm->live_vars[sm->record_vars[record_index(sm, rec)].first + i];
	*first_location = v->first;
	*num_locations = v->count;
	return 0;
}

size_t jitmap__location_live_var(const jitmap_stackmap *sm, const jitmap_record *rec, size_t i)
{
	if (jitmap_blob_dialect(sm, rec->blob) == JITMAP_DIALECT_LLVM || !sm->location_vars ||
	    record_index(sm, rec) == SIZE_MAX || i >= rec->num_locations)
		return i;
	return sm->location_vars[(size_t)(rec->locations - sm->locations) + i];
}

size_t jitmap_location_extras(const jitmap_stackmap *sm, const jitmap_record *rec, size_t loc,
			      const int16_t **extras)
{
	*extras = NULL;
	if (!sm->loc_extras || record_index(sm, rec) == SIZE_MAX || loc >= rec->num_locations)
		return 0;
	const struct jitmap__loc_extras *x =
		&sm->loc_extras[(size_t)(rec->locations - sm->locations) + loc];
	*extras = sm->extras + x->first;
	return x->num;
}

int jitmap_function_spills(const jitmap_stackmap *sm, size_t i, int *has_fp,
			   const jitmap_spill **spills, size_t *num)
{
	if (i >= sm->num_functions)
		return -ERANGE;
	const struct jitmap__spill_table *t = sm->spill_tables ? &sm->spill_tables[i] : NULL;
	*has_fp = t && t->known ? t->has_fp : -1;
	*spills = t ? sm->spills + t->first : NULL;
	*num = t ? t->num : 0;
	return 0;
}
