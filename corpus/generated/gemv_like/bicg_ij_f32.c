/*
 * BiCG sub-kernel: s += A^T r and q += A p in one sweep (float).
 */
void bicg_ij_f32(int n, int m, float A[n][m], float r[n], float p[m], float s[m], float q[n])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            s[j] += r[i] * A[i][j];
            q[i] += A[i][j] * p[j];
        }
}
