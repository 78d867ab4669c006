/* A small convolution + linear network trained for a few steps on the CPU,
 * instrumented the way one instruments a real training loop: one scope per
 * layer and phase, a data-loading thread, a manual range for the optimizer,
 * PROFILE_STEP() per iteration (ProfilerStep#N ranges) and the activations'
 * memory (CPU Mem / Self CPU Mem columns: allocated in forward, freed after
 * the backward pass, as a framework's autograd buffers are).
 *
 *   cc -O2 -DPROFILE_ENABLE -Iinclude samples/train_cpu.c -o train_cpu -lpthread -lm
 *   ./train_cpu            # prints the key_averages table, writes train_cpu.<pid>.sprof
 *
 * The arithmetic is real (a 3x3 convolution, ReLU, a linear layer, softmax
 * cross-entropy and their gradients) so that the table shows where the time of
 * such a loop goes: the convolution and its gradient dominate. */
#define SCOPEPROF_IMPLEMENTATION /* this program's one copy of the implementation */
#include "scopeprof.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 16, IMG = 28, CH = 8, K = 3, OUT = IMG - K + 1, FEAT = CH * OUT * OUT, CLASSES = 10 };
enum { STEPS = 12 };

typedef struct {
    float conv_w[CH][K][K], conv_b[CH];
    float fc_w[CLASSES][FEAT], fc_b[CLASSES];
} model;

typedef struct {
    float x[BATCH][IMG][IMG];
    int y[BATCH];
} batch;

static float frand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xFFFF) / 65536.0f - 0.5f;
}

/* ---- the data loader: a producer thread filling a one-slot queue -------- */
static batch queue_slot;
static int queue_full, loader_done;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;

static void *loader(void *arg) {
    (void)arg;
    PROFILE_THREAD_NAME("data_loader");
    unsigned seed = 7;
    for (int s = 0; s < STEPS; s++) {
        batch b;
        {
            PROFILE_SCOPE("load_batch");
            for (int i = 0; i < BATCH; i++) {
                b.y[i] = (int)(seed % CLASSES);
                for (int r = 0; r < IMG; r++)
                    for (int c = 0; c < IMG; c++) b.x[i][r][c] = frand(&seed) + 0.1f * (float)b.y[i];
            }
        }
        PROFILE_SCOPE("enqueue");
        pthread_mutex_lock(&qlock);
        while (queue_full) pthread_cond_wait(&qcond, &qlock);
        queue_slot = b;
        queue_full = 1;
        pthread_cond_broadcast(&qcond);
        pthread_mutex_unlock(&qlock);
    }
    pthread_mutex_lock(&qlock);
    loader_done = 1;
    pthread_cond_broadcast(&qcond);
    pthread_mutex_unlock(&qlock);
    return NULL;
}

static void next_batch(batch *b) {
    PROFILE_FUNCTION();
    pthread_mutex_lock(&qlock);
    while (!queue_full) pthread_cond_wait(&qcond, &qlock);
    *b = queue_slot;
    queue_full = 0;
    pthread_cond_broadcast(&qcond);
    pthread_mutex_unlock(&qlock);
}

/* ---- layers --------------------------------------------------------------- */
static void conv2d(const model *m, const float x[IMG][IMG], float out[CH][OUT][OUT]) {
    PROFILE_SCOPE("conv2d");
    for (int c = 0; c < CH; c++)
        for (int i = 0; i < OUT; i++)
            for (int j = 0; j < OUT; j++) {
                float acc = m->conv_b[c];
                for (int a = 0; a < K; a++)
                    for (int b = 0; b < K; b++) acc += m->conv_w[c][a][b] * x[i + a][j + b];
                out[c][i][j] = acc;
            }
}

static void relu(float *v, int n) {
    PROFILE_SCOPE("relu");
    for (int i = 0; i < n; i++) v[i] = v[i] > 0 ? v[i] : 0;
}

static void linear(const model *m, const float *feat, float *logits) {
    PROFILE_SCOPE("linear");
    for (int k = 0; k < CLASSES; k++) {
        float acc = m->fc_b[k];
        for (int i = 0; i < FEAT; i++) acc += m->fc_w[k][i] * feat[i];
        logits[k] = acc;
    }
}

static float softmax_xent(const float *logits, int y, float *dlogits) {
    PROFILE_SCOPE("cross_entropy");
    float mx = logits[0], sum = 0;
    for (int k = 1; k < CLASSES; k++) mx = logits[k] > mx ? logits[k] : mx;
    for (int k = 0; k < CLASSES; k++) sum += expf(logits[k] - mx);
    for (int k = 0; k < CLASSES; k++) dlogits[k] = expf(logits[k] - mx) / sum - (k == y);
    return logf(sum) + mx - logits[y];
}

/* Backward of linear + ReLU + conv: gradients accumulated into g. */
static void backward(const model *m, model *g, const float x[IMG][IMG], const float *feat,
                     const float *dlogits) {
    PROFILE_FUNCTION();
    static float dfeat[FEAT];
    {
        PROFILE_SCOPE("linear_backward");
        memset(dfeat, 0, sizeof dfeat);
        for (int k = 0; k < CLASSES; k++) {
            g->fc_b[k] += dlogits[k];
            for (int i = 0; i < FEAT; i++) {
                g->fc_w[k][i] += dlogits[k] * feat[i];
                dfeat[i] += dlogits[k] * m->fc_w[k][i];
            }
        }
    }
    {
        PROFILE_SCOPE("conv2d_backward");
        const float(*d)[OUT][OUT] = (const float(*)[OUT][OUT])dfeat;
        const float(*f)[OUT][OUT] = (const float(*)[OUT][OUT])feat;
        for (int c = 0; c < CH; c++)
            for (int i = 0; i < OUT; i++)
                for (int j = 0; j < OUT; j++) {
                    float gd = f[c][i][j] > 0 ? d[c][i][j] : 0; /* through the ReLU */
                    g->conv_b[c] += gd;
                    for (int a = 0; a < K; a++)
                        for (int b = 0; b < K; b++) g->conv_w[c][a][b] += gd * x[i + a][j + b];
                }
    }
}

static void sgd(model *m, model *g, float lr) {
    float *w = (float *)m, *gw = (float *)g;
    for (size_t i = 0; i < sizeof *m / sizeof(float); i++) w[i] -= lr * gw[i];
    memset(g, 0, sizeof *g);
}

int main(void) {
    PROFILE_FUNCTION();
    static model m, g;
    unsigned seed = 1;
    for (size_t i = 0; i < sizeof m / sizeof(float); i++) ((float *)&m)[i] = 0.05f * frand(&seed);

    pthread_t th;
    if (pthread_create(&th, NULL, loader, NULL) != 0) return 1;
    for (int s = 0; s < STEPS; s++) {
        PROFILE_SCOPE("train_step");
        batch b;
        next_batch(&b);
        float loss = 0;
        for (int i = 0; i < BATCH; i++) {
            float logits[CLASSES], dlogits[CLASSES];
            float(*act)[OUT][OUT];
            {
                PROFILE_SCOPE("forward");
                act = malloc(sizeof(float[CH][OUT][OUT]));
                if (!act) return 1;
                PROFILE_ALLOC(act, sizeof(float[CH][OUT][OUT]));
                conv2d(&m, (const float(*)[IMG])b.x[i], act);
                relu(&act[0][0][0], FEAT);
                linear(&m, &act[0][0][0], logits);
            }
            loss += softmax_xent(logits, b.y[i], dlogits);
            backward(&m, &g, (const float(*)[IMG])b.x[i], &act[0][0][0], dlogits);
            PROFILE_FREE(act);
            free(act);
        }
        PROFILE_BEGIN("optimizer_step");
        sgd(&m, &g, 0.01f / BATCH);
        PROFILE_END();
        if (s % 4 == 0) printf("step %2d  loss %.4f\n", s, loss / BATCH);
        PROFILE_STEP();
    }
    pthread_join(th, NULL);
    return 0;
}
