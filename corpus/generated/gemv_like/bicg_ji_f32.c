/*
 * BiCG sub-kernel with the column loop outside (float).
 */
void bicg_ji_f32(int n, int m, float A[n][m], float r[n], float p[m], float s[m], float q[n])
{
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++) {
            s[j] += r[i] * A[i][j];
            q[i] += A[i][j] * p[j];
        }
}
