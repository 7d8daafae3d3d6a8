/*
 * insn_count: a QEMU TCG plugin that counts the guest instructions a program
 * executes, for scripts/arm_count.py.
 *
 * Build:  cc -shared -fPIC -O2 scripts/insn_count.c -o libinsn_count.so
 * Use:    qemu-aarch64 -plugin ./libinsn_count.so,out=FILE PROGRAM ARGS...
 *         FILE receives "insns N" at exit (without out=, stderr does).
 *
 * Each translation block gets an inline 64-bit add of its instruction count,
 * run every time the block is entered (no helper call: the counting costs a
 * few host instructions per block). A block left early (a fault, a syscall in
 * its middle) still counts whole; that error is a few instructions per
 * program, not per byte. One counter for all vCPUs: the programs counted run
 * their work on one thread.
 *
 * Debian 12 ships no qemu-plugin.h, so the declarations below are copied by
 * hand from QEMU 7.2's include/qemu/qemu-plugin.h (plugin API version 1,
 * QEMU_PLUGIN_VERSION 1): only what this file uses, with the same types.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- QEMU 7.2 include/qemu/qemu-plugin.h, API version 1 (excerpt) ---- */
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_VERSION 1

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* only passed by pointer here */
struct qemu_plugin_tb;

enum qemu_plugin_op {
    QEMU_PLUGIN_INLINE_ADD_U64,
};

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);
/* ---- end of the excerpt ---- */

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t insns;
static char out_path[4096];
/* The QEMU process the plugin was loaded into. A guest fork() forks QEMU
 * too, and the child (say, one whose exec of a missing tool fails) would run
 * at_exit with a copy of the count and overwrite the parent's file. */
static pid_t owner;

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns,
                                             qemu_plugin_tb_n_insns(tb));
}

static void at_exit(qemu_plugin_id_t id, void *userdata)
{
    char line[64];
    FILE *f;

    (void)id;
    (void)userdata;
    if (getpid() != owner) {
        return;
    }
    snprintf(line, sizeof line, "insns %" PRIu64 "\n", insns);
    if (out_path[0] && (f = fopen(out_path, "w")) != NULL) {
        fputs(line, f);
        fclose(f);
        return;
    }
    fputs(line, stderr);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    int i;

    (void)info;
    for (i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0 && strlen(argv[i] + 4) < sizeof out_path) {
            strcpy(out_path, argv[i] + 4);
        } else {
            fprintf(stderr, "insn_count: unknown argument '%s' (expected out=FILE)\n", argv[i]);
            return -1;
        }
    }
    owner = getpid();
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
