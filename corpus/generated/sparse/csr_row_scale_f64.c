/*
 * row scaling of a CSR matrix in place, val[j] *= d[i] (double).
 */
void csr_row_scale_f64(int n, int nnz, int rowptr[n + 1], int col[nnz], double val[nnz],
                       double d[n])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            val[j] *= d[i];
}
