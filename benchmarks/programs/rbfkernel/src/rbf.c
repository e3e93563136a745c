/*
 * rbf.c -- squared distances through a small static inline helper, the
 * Gaussian of each, then a matrix-vector product with the weights.
 */
#include <math.h>

#include <rbfkernel.h>

static inline double sq(double x)
{
    return x * x;
}

void rbf_predict(int nx, int ny, int dim, double gamma,
                 double X[NX][DIM], double Y[NY][DIM], double w[NY],
                 double Kmat[NX][NY], double pred[NX])
{
    int i, j, d;
    double dist;

    for (i = 0; i < nx; i++)
        for (j = 0; j < ny; j++) {
            dist = 0.0;
            for (d = 0; d < dim; d++)
                dist += sq(X[i][d] - Y[j][d]);
            Kmat[i][j] = exp(-gamma * dist);
        }

    for (i = 0; i < nx; i++) {
        pred[i] = 0.0;
        for (j = 0; j < ny; j++)
            pred[i] += Kmat[i][j] * w[j];
    }
}
