#include <math.h>

/* Logistic function and its log-sum-exp companion (softplus), element by element. */
void sigmoid_softplus(int n, double x[n], double sig[n], double sp[n])
{
    int i;

    for (i = 0; i < n; i = i + 1) {
        sig[i] = 1.0 / (1.0 + exp(-x[i]));
        sp[i] = log(1.0 + exp(x[i]));
    }
}
