/* C += A B, A sparse in CSR (n x m), B and C dense with K columns. */
void spmm_csr(int n, int m, int nnz, int K, const int rowptr[n + 1], const int col[nnz], const double val[nnz],
              const double B[m][K], double C[n][K])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            for (int k = 0; k < K; k++)
                C[i][k] += val[j] * B[col[j]][k];
}
