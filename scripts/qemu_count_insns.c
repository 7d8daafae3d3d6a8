/*
 * QEMU TCG plugin: counts the guest instructions a program executes and prints
 * "insns N" at exit. Plugin API version 1 (QEMU 7.2, Debian 12's qemu-user),
 * declared here because Debian ships no qemu-plugin.h.
 *
 *   gcc -shared -fPIC -O2 -o libcount.so scripts/qemu_count_insns.c
 *   qemu-aarch64 -L /usr/aarch64-linux-gnu -plugin ./libcount.so -d plugin PROGRAM ARGS
 *
 * Single-threaded guests only (the counter is a plain inline add).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*tb_trans_cb)(qemu_plugin_id_t, struct qemu_plugin_tb *);
typedef void (*udata_cb)(qemu_plugin_id_t, void *);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, tb_trans_cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *, enum qemu_plugin_op,
                                              void *, uint64_t);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, udata_cb, void *);
void qemu_plugin_outs(const char *);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t insns;

/* Each translated block adds its instruction count every time it runs. */
static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns,
                                             qemu_plugin_tb_n_insns(tb));
}

static void done(qemu_plugin_id_t id, void *p)
{
    char buf[64];
    (void)id;
    (void)p;
    snprintf(buf, sizeof buf, "insns %llu\n", (unsigned long long)insns);
    qemu_plugin_outs(buf);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
                                                               const qemu_info_t *info,
                                                               int argc, char **argv)
{
    (void)info;
    (void)argc;
    (void)argv;
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    qemu_plugin_register_atexit_cb(id, done, NULL);
    return 0;
}
