/*
 * BiCG sub-kernel: s += A^T r and q += A p in one sweep (double).
 */
void bicg_ij_f64(int n, int m, double A[n][m], double r[n], double p[m], double s[m], double q[n])
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            s[j] += r[i] * A[i][j];
            q[i] += A[i][j] * p[j];
        }
}
