/*
 * sampled dense-dense product: out[j] = val[j] * (A[i] . B[col[j]]) for every entry (float).
 */
void sddmm_f32(int n, int m, int nnz, int k, int rowptr[n + 1], int col[nnz], float val[nnz],
               float A[n][k], float B[m][k], float out[nnz])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++) {
            float s = 0.0f;
            for (int p = 0; p < k; p++)
                s += A[i][p] * B[col[j]][p];
            out[j] = val[j] * s;
        }
}
