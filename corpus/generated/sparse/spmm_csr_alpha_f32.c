/*
 * CSR times a dense matrix scaled by alpha, scaled-by-beta result first (float).
 */
void spmm_csr_alpha_f32(int n, int m, int nnz, int k, float alpha, float beta, int rowptr[n + 1],
                        int col[nnz], float val[nnz], float B[m][k], float C[n][k])
{
    for (int i = 0; i < n; i++) {
        for (int p = 0; p < k; p++)
            C[i][p] *= beta;
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            for (int p = 0; p < k; p++)
                C[i][p] += alpha * val[j] * B[col[j]][p];
    }
}
