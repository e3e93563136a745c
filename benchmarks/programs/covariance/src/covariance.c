/*
 * covariance.c -- column means, centring, then the symmetric product
 * X^T X / (nobs - 1) over the upper triangle, mirrored to the lower one.
 */
#include <covariance.h>

void kernel_covariance(int nobs, int nvar,
                       DATA_TYPE data[NOBS][NVAR], DATA_TYPE mean[NVAR],
                       DATA_TYPE cov[NVAR][NVAR])
{
    int i, j, k;
    DATA_TYPE inv_n = 1.0 / (DATA_TYPE) nobs;
    DATA_TYPE inv_n1 = 1.0 / (DATA_TYPE) (nobs - 1);
    DATA_TYPE s;

    /* 1. column means, accumulated row by row */
    for (j = 0; j < nvar; j++)
        mean[j] = 0.0;
    for (i = 0; i < nobs; i++)
        for (j = 0; j < nvar; j++)
            mean[j] += data[i][j];
    for (j = 0; j < nvar; j++)
        mean[j] *= inv_n;

    /* 2. centre every column */
    for (i = 0; i < nobs; i++)
        for (j = 0; j < nvar; j++)
            data[i][j] -= mean[j];

    /* 3. upper triangle of X^T X, scaled */
    for (i = 0; i < nvar; i++)
        for (j = i; j < nvar; j++) {
            s = 0.0;
            for (k = 0; k < nobs; k++)
                s += data[k][i] * data[k][j];
            cov[i][j] = s * inv_n1;
        }

    /* 4. mirror into the lower triangle */
    for (i = 1; i < nvar; i++)
        for (j = 0; j < i; j++)
            cov[i][j] = cov[j][i];
}
