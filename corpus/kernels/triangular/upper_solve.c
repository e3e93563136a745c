/*
 * Back substitution: solve U x = b for upper-triangular U. Steps must be
 * positive, so p counts upwards and the row index is n - 1 - p.
 */
void back_subst(int n, double U[n][n], double b[n], double x[n])
{
    int p, q;

#pragma scop
    for (p = 0; p < n; p++) {
        x[n - 1 - p] = b[n - 1 - p];
        for (q = n - p; q < n; q++)
            x[n - 1 - p] -= U[n - 1 - p][q] * x[q];
        x[n - 1 - p] /= U[n - 1 - p][n - 1 - p];
    }
#pragma endscop
}
